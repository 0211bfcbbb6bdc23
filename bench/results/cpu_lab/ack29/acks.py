#!/usr/bin/env python3
"""acks.py BASE...: per 16 MiB call (long - short), summed over ranks: DATA, ACKs alone, and acksShort/acksLong by reason."""
import sys, re, collections
def tot(d):
    s = collections.Counter()
    for l in open(d + "/out"):
        if 'msg="mrtransport: engine"' in l:
            for k, v in re.findall(r'(\w+)=(\d+)\b', l):
                if k in ("data", "acks", "acksOnData", "datagramsWritten"): s[k] += int(v)
            for kind in ("acksShort", "acksLong"):
                m = re.search(kind + r'=(\S+)', l)
                if m:
                    for k, v in re.findall(r'(\w+):(\d+)', m.group(1)): s[kind[4:] + "." + k] += int(v)
    n = sum(1 for l in open(d + "/out") if l.startswith("[rank 0]") and "op=AllReduce" in l and "bytes=16777216" in l)
    return s, n
for base in sys.argv[1:]:
    a, na = tot(base + ".short"); b, nb = tot(base + ".long"); n = nb - na
    if n <= 0: print(base, "no calls"); continue
    print(base.split("/")[-1], f"calls {n}: " + " ".join(f"{k} {(b[k]-a[k])/n:.0f}" for k in sorted(set(a) | set(b))))
