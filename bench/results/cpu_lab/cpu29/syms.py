#!/usr/bin/env python3
"""syms.py DIR: per run (X.rN), inclusive CPU-ms a call (long-short over the extra calls) of chosen symbols, from X.rN.{short,long}.fold."""
import sys, glob, os, collections, re
SYMS = [("ConnStats", r"\.ConnStats$"), ("farPeers", r"farPeers$"), ("Poller.Wait", r"Poller\)\.Wait$"),
        ("mallocgc", r"^runtime\.mallocgc$"), ("readSlots", r"readSlots$"), ("handleBatch", r"handleBatch$"), ("feed", r"engine\)\.feed$"),
        ("engine.process", r"engine\)\.process$"), ("engine.write", r"engine\)\.write$"), ("sendmmsg", r"__x64_sys_sendmmsg$"),
        ("recvmmsg", r"__x64_sys_recvmmsg$"), ("HandleDatagramAt", r"HandleDatagramAt$"), ("PollTransmitVec", r"PollTransmitVec$"),
        ("timerLoop", r"timerLoop$"), ("coalesceLoop", r"coalesceLoop$"), ("SpinAny", r"mrtransport\.\(\*Endpoint\)\.SpinAny$"),
        ("sysmon", r"runtime\.sysmon$"), ("metaroce self", None), ("ALL", "")]
def load(p):
    c = collections.Counter()
    for line in open(p):
        st, v = line.rsplit(" ", 1); v = float(v); fr = st.split(";")
        c["ALL"] += v
        if "metaroce" in fr[-1] and "crc32c" not in fr[-1]: c["metaroce self"] += v
        seen = set()
        for name, rx in SYMS:
            if not rx: continue
            if any(re.search(rx, f) for f in fr): c[name] += v
    return c
def calls(d):
    return sum(1 for l in open(d + "/out") if "op=AllReduce" in l and "bytes=16777216" in l) / 8
D = sys.argv[1]; rows = {}
for s in sorted(glob.glob(D + "/*.short.fold")):
    k = os.path.basename(s)[:-len(".short.fold")]; l = s.replace(".short.fold", ".long.fold")
    if not os.path.exists(l): continue
    fail = any("run failed" in open(f"{D}/{k}.{x}/out").read() for x in ("short", "long"))
    n = calls(f"{D}/{k}.long") - calls(f"{D}/{k}.short")
    a, b = load(s), load(l)
    rows[k] = ({x: (b[x] - a[x]) / n for x in set(a) | set(b)}, n, fail, open(f"{D}/{k}.short/load").read().split()[1], open(f"{D}/{k}.long/load").read().split()[-2])
ks = sorted(rows)
print("symbol (inclusive) | " + " | ".join(ks))
print("failed run | " + " | ".join("FAIL" if rows[k][2] else "" for k in ks))
print("load | " + " | ".join(f"{rows[k][3]}..{rows[k][4]}" for k in ks))
for name, _ in SYMS:
    print(name + " | " + " | ".join(f"{rows[k][0].get(name, 0):.1f}" for k in ks))
