#!/usr/bin/env python3
"""leaf.py SHORT.fold LONG.fold CALLS REGEX: self time per call of leaf symbols matching REGEX."""
import sys, re, collections
def load(p, rx):
    c=collections.Counter()
    for line in open(p):
        st,v=line.rsplit(" ",1); leaf=st.split(";")[-1]
        if re.search(rx,leaf): c[leaf]+=float(v)
    return c
a=load(sys.argv[1],sys.argv[4]); b=load(sys.argv[2],sys.argv[4]); n=float(sys.argv[3])
print(f"total {(sum(b.values())-sum(a.values()))/n:.2f}")
for k in sorted(set(a)|set(b), key=lambda k:-(b[k]-a[k]))[:int(sys.argv[5]) if len(sys.argv)>5 else 50]:
    print(f"{(b[k]-a[k])/n:8.2f}  {k}")
