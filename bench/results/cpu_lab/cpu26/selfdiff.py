"""selfdiff.py self|go LONG SHORT N: CPU-ms per call (long - short over 24 calls) by leaf symbol
(self) or by the first gocoll frame (go), from comma-separated `perf script -F period,ip,sym` outputs."""
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
def count(paths, key):
    c=collections.Counter()
    for p in paths:
        for fr in stacks(p):
            c[key(fr)]+=1
    return c
mode=sys.argv[1]
def key(fr):
    if mode=='self': return fr[0]
    if mode=='go':  # first Go (user) frame
        for f in fr:
            if 'gocoll' in f: return f
        return 'nogocoll:'+fr[0]
L=count(sys.argv[2].split(','), key); S=count(sys.argv[3].split(','), key)
calls=24
d={k:(L[k]-S[k])/calls for k in set(L)|set(S)}
for k,v in sorted(d.items(), key=lambda kv:-kv[1])[:int(sys.argv[4])]: print(f"{v:6.2f} {k}")
