import sys,collections,glob,statistics as st
ev=collections.defaultdict(lambda: collections.defaultdict(list))  # call -> rank -> events
for r in range(8):
    for line in open(f'{sys.argv[1]}.{r}'):
        c,b,t,e,peer,piece,top,n=line.split()
        ev[int(c)][r].append((int(t),e,int(peer),int(piece),int(top),int(n)))
def lvl(r,p):
    if p<0: return '-'
    return 'shm' if p//2==r//2 else ('lan' if p//4==r//4 else 'wan')
calls=sorted(ev)
rows=[]
prevE=None
for c in calls[2:12]:  # timed out-of-place calls (after 2 warm-up)
    R=ev[c]
    t0=min(x[0][0] for x in R.values())
    def f(r,pred,agg=min):
        v=[t for (t,e,p,pc,tp,n) in R[r] if pred(r,t,e,p,pc,tp,n)]
        return (agg(v)-t0)/1e6 if v else float('nan')
    out=[]
    for site in (0,1):
        rs=range(4*site,4*site+4)
        B=max(f(r,lambda r,t,e,p,pc,tp,n: e=='B') for r in rs)
        Bmin=min(f(r,lambda r,t,e,p,pc,tp,n: e=='B') for r in rs)
        hs=st.median([f(r,lambda r,t,e,p,pc,tp,n: e=='S' and pc==0 and lvl(r,p)=='shm') for r in rs])
        ht=st.median([f(r,lambda r,t,e,p,pc,tp,n: e=='T' and pc==0 and lvl(r,p)=='shm') for r in rs])
        ls=st.median([f(r,lambda r,t,e,p,pc,tp,n: e=='S' and pc==0 and lvl(r,p)=='lan') for r in rs])
        la=st.median([f(r,lambda r,t,e,p,pc,tp,n: e=='A' and pc==0 and lvl(r,p)=='lan') for r in rs])
        ws=min(f(r,lambda r,t,e,p,pc,tp,n: e=='S' and lvl(r,p)=='wan') for r in rs)
        wsm=st.median([f(r,lambda r,t,e,p,pc,tp,n: e=='S' and lvl(r,p)=='wan') for r in rs])
        wl=max(f(r,lambda r,t,e,p,pc,tp,n: e=='A' and lvl(r,p)=='wan',max) for r in rs)
        wsl=max(f(r,lambda r,t,e,p,pc,tp,n: e=='S' and lvl(r,p)=='wan',max) for r in rs)
        E=max(f(r,lambda r,t,e,p,pc,tp,n: e=='E') for r in rs)
        out.append(f"s{site+1}: B {Bmin:5.1f}-{B:5.1f} hS {hs:4.1f} hT {ht:4.1f} lS {ls:4.1f} lA {la:4.1f} wS1 {ws:5.1f}/{wsm:5.1f} lastWsend {wsl:6.1f} lastWarr {wl:6.1f} E {E:6.1f}")
    print(f"call {c}: "+" | ".join(out))
