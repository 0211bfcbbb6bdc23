#!/usr/bin/env python3
"""fold.py DIR: folded stacks (root;...;leaf period_ms) over perf.*.txt (perf script -F period,ip,sym,dso)."""
import sys, glob, re, collections
def samples(path):
    cur=None; period=0
    for line in open(path):
        if not line.strip():
            if cur is not None: yield period, cur
            cur=None; continue
        if cur is None:
            try: period=int(line.split()[0])
            except ValueError: period=1000000
            cur=[]; continue
        toks=line.strip().split(None,1)
        if len(toks)<2: continue
        m=re.match(r"(.*) \((.*)\)$", toks[1])
        sym,dso=(m.group(1),m.group(2)) if m else (toks[1],"")
        sym=re.sub(r"\+0x[0-9a-f]+$","",sym)
        sym=sym.replace("github.com/gocoll/gocoll/","")
        if "kernel" in dso: sym="[k]"+sym
        cur.append(sym)
    if cur is not None: yield period, cur
c=collections.Counter()
for f in glob.glob(sys.argv[1]+"/perf.*.txt"):
    for p,fr in samples(f):
        c[";".join(reversed(fr))]+=p/1e6
for k,v in c.items(): print(f"{k} {v:.3f}")
