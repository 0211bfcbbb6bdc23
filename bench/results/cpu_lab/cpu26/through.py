"""through.py FUNC UP LONG SHORT N: CPU-ms per call (long - short over 24 calls: 2 rounds x 12) of the
samples whose stack passes through FUNC, by the UP frames above it and the leaf; LONG and SHORT are
comma-separated `perf script -F period,ip,sym` outputs (one sample = 1 ms at -F 1000)."""
import sys, collections, re
def stacks(path):
    cur=None
    for line in open(path):
        if not line.strip():
            if cur: yield cur
            cur=None; continue
        if cur is None:
            cur=[]; continue
        t=line.strip().split(None,1)
        if len(t)<2: continue
        cur.append(re.sub(r"\+0x[0-9a-f]+$","",t[1]))
    if cur: yield cur
target=sys.argv[1]; up=int(sys.argv[2])
def count(paths):
    c=collections.Counter()
    for p in paths:
        for fr in stacks(p):
            for i,f in enumerate(fr):
                if target in f:
                    c[' < '.join(x.replace('github.com/gocoll/gocoll/','') for x in fr[i+1:i+1+up])+'  ||leaf '+fr[0]]+=1
                    break
    return c
L=count(sys.argv[3].split(',')); S=count(sys.argv[4].split(','))
d={k:(L[k]-S[k])/24 for k in set(L)|set(S)}
tot=sum(d.values()); print("total",round(tot,2))
for k,v in sorted(d.items(), key=lambda kv:-kv[1])[:int(sys.argv[5])]: print(f"{v:6.2f} {k}")
