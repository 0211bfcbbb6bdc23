import sys,collections
ev=collections.defaultdict(lambda: collections.defaultdict(list))
for r in range(8):
    for line in open(f'{sys.argv[1]}.{r}'):
        c,b,t,e,peer,piece,top,n=line.split()
        ev[int(c)][r].append((int(t),e,int(peer),int(piece),int(top),int(n)))
def lvl(r,p):
    return 'shm' if p//2==r//2 else ('lan' if p//4==r//4 else 'wan')
for c in [int(x) for x in sys.argv[2:]]:
    R=ev[c]; t0=min(x[0][0] for x in R.values())
    print("call",c)
    for r in range(8):
        evs=R[r]
        B=evs[0][0]; E=evs[-1][0]
        wa=[t for (t,e,p,pc,tp,n) in evs if e=='A' and lvl(r,p)=='wan']
        la=[t for (t,e,p,pc,tp,n) in evs if e=='A' and lvl(r,p)=='lan']
        ha=[t for (t,e,p,pc,tp,n) in evs if e=='A' and lvl(r,p)=='shm']
        ws=[t for (t,e,p,pc,tp,n) in evs if e=='S' and lvl(r,p)=='wan']
        g=lambda x:(x-t0)/1e6
        # last events: which level's arrival was last
        print(f" r{r}: B {g(B):6.1f} firstWS {g(min(ws)):6.1f} lastWS {g(max(ws)):6.1f} lastWA {g(max(wa)):6.1f} lastLA {g(max(la)):6.1f} lastHA {g(max(ha)):6.1f} E {g(E):6.1f}")
