#!/usr/bin/env python3
"""counts.py DIR: engine counters a call (long - short over the extra 16 MiB AllReduce calls), all ranks summed."""
import sys, glob, re, os, collections
K = ("datagramsWritten","writeBatches","datagramsRead","readBatches","spinBatches","timerRuns","data","acks","acksOnData","naps")
def tot(d):
    s = collections.Counter()
    for l in open(d + "/out"):
        if 'msg="mrtransport: engine"' in l:
            for k, v in re.findall(r'(\w+)=(\d+)', l):
                if k in K: s[k] += int(v)
    n = sum(1 for l in open(d + "/out") if "op=AllReduce" in l and "bytes=16777216" in l) / 8
    return s, n
for s in sorted(glob.glob(sys.argv[1] + "/*.short")):
    l = s[:-6] + ".long"
    if not os.path.exists(l + "/out"): continue
    a, na = tot(s); b, nb = tot(l); n = nb - na
    if n <= 0: continue
    print(os.path.basename(s[:-6]) + ": " + " ".join(f"{k} {(b[k]-a[k])/n:.0f}" for k in K))
