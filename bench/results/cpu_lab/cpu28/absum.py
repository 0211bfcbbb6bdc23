#!/usr/bin/env python3
"""absum.py DIR: per binary and round, CPU-ms a call (long - short over the extra AllReduce calls) by component, CRC apart."""
import sys, glob, collections, importlib.util, re, os
spec = importlib.util.spec_from_file_location("cl", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "job23", "classify.py")); cl = importlib.util.module_from_spec(spec); spec.loader.exec_module(cl)
def agg(d):
    tot = collections.Counter()
    for f in sorted(glob.glob(d + "/perf.*")):
        for period, fr in cl.samples(f):
            ms = period / 1e6
            tot["TOTAL"] += ms
            tot[cl.classify(fr)] += ms
            if any("crc32" in s for s in fr): tot["CRC (inclusive)"] += ms
            if any(s.endswith("summarise") for s in fr): tot["summarise (inclusive)"] += ms
            if any(s.endswith("repickSample") for s in fr): tot["repickSample (inclusive)"] += ms
    return tot
def calls(d):
    n = sum(1 for l in open(d + "/out") if "op=AllReduce" in l and "bytes=16777216" in l)
    return n / 8
D = sys.argv[1]
rows = {}
for s in sorted(glob.glob(D + "/*.short")):
    l = s[:-6] + ".long"
    if not os.path.exists(l + "/load") or len(open(l + "/load").readlines()) < 2: continue
    k = os.path.basename(s[:-6])
    n = calls(l) - calls(s)
    a, b = agg(s), agg(l)
    rows[k] = ({c: (b[c] - a[c]) / n for c in set(a) | set(b)}, n, open(s + "/load").read().split()[1], open(l + "/load").read().split()[-2])
keys = sorted(rows)
comps = sorted({c for r in rows.values() for c in r[0]}, key=lambda c: -max(r[0].get(c, 0) for r in rows.values()))
print("component | " + " | ".join(keys))
print("calls | " + " | ".join(f"{rows[k][1]:.0f}" for k in keys))
print("load (start..end) | " + " | ".join(f"{rows[k][2]}..{rows[k][3]}" for k in keys))
for c in comps:
    print(c + " | " + " | ".join(f"{rows[k][0].get(c, 0):.1f}" for k in keys))
