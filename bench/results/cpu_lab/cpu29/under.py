#!/usr/bin/env python3
"""under.py SHORT.fold LONG.fold CALLS REGEX [depth]: among stacks matching REGEX, per call (long-short)/CALLS, grouped by the frames after the first match (depth frames)."""
import sys, re, collections
def load(p, rx, depth):
    c=collections.Counter()
    for line in open(p):
        st,v=line.rsplit(" ",1); fr=st.split(";")
        for i,f in enumerate(fr):
            if re.search(rx,f):
                c[";".join(fr[i:i+depth])]+=float(v); break
    return c
rx=sys.argv[4]; d=int(sys.argv[5]) if len(sys.argv)>5 else 2
a=load(sys.argv[1],rx,d); b=load(sys.argv[2],rx,d); n=float(sys.argv[3])
tot=sum(b.values())-sum(a.values())
print(f"total {tot/n:.2f}")
for k in sorted(set(a)|set(b), key=lambda k:-(b[k]-a[k]))[:40]:
    print(f"{(b[k]-a[k])/n:8.2f}  {k}")
