#!/usr/bin/env python3
"""symdiff.py SHORT LONG CALLS: per-symbol self and inclusive CPU-ms a call (long - short)/CALLS, from perf.* files."""
import sys, glob, collections, importlib.util, os
spec = importlib.util.spec_from_file_location("cl", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "job23", "classify.py")); cl = importlib.util.module_from_spec(spec); spec.loader.exec_module(cl)
def agg(d):
    s, inc = collections.Counter(), collections.Counter()
    for f in sorted(glob.glob(d + "/perf.*")):
        for period, fr in cl.samples(f):
            ms = period / 1e6
            if fr: s[fr[0]] += ms
            for sym in set(fr): inc[sym] += ms
    return s, inc
a, ai = agg(sys.argv[1]); b, bi = agg(sys.argv[2]); n = float(sys.argv[3])
print("== self, CPU-ms a call")
for k in sorted(set(a) | set(b), key=lambda k: -(b[k] - a[k]))[:70]:
    print(f"{(b[k]-a[k])/n:8.2f}  {k}")
print("== inclusive, CPU-ms a call")
for k in sorted(set(ai) | set(bi), key=lambda k: -(bi[k] - ai[k]))[:150]:
    print(f"{(bi[k]-ai[k])/n:8.2f}  {k}")
