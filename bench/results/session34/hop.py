import collections,statistics as st,sys
d=sys.argv[1]
ev=collections.defaultdict(lambda: collections.defaultdict(list))
for r in range(8):
    for line in open(f'{d}/t.{r}'):
        c,b,t,e,peer,piece,top,n=line.split()
        ev[int(c)][r].append((int(t),e,int(peer),int(piece),int(top),int(n)))
def lvl(r,p): return 'shm' if p//2==r//2 else ('lan' if p//4==r//4 else 'wan')
hostlat=[];lanlat=[];skew=[];fws=[];spread=[];lanS=[]
for c in sorted(ev)[2:12]:
    R=ev[c]; t0=min(R[x][0][0] for x in range(8))
    def first(r,e_,l,pc=0):
        v=[t for (t,e,p,pcc,tp,n) in R[r] if e==e_ and lvl(r,p)==l and pcc==pc]
        return min(v) if v else None
    for r in range(8):
        hp=r^1; lp=(r^2)
        a=first(r,'A','shm'); ps=first(hp,'S','shm'); B=R[r][0][0]
        hostlat.append((a-max(ps,B))/1e6)
        a2=first(r,'A','lan'); ps2=first(lp,'S','lan')
        lanlat.append((a2-ps2)/1e6)
        lanS.append((ps2-t0)/1e6)
        skew.append((B-t0)/1e6)
        fws.append((first(r,'S','wan')-t0)/1e6)
    wa=[max(t for (t,e,p,pc,tp,n) in R[r] if e=='A' and lvl(r,p)=='wan') for r in range(8)]
    spread.append((max(wa)-min(wa))/1e6)
q=lambda x: "med %5.2f p90 %5.2f max %5.2f"%(st.median(x), sorted(x)[int(.9*len(x))], max(x))
print("start skew       :", q(skew))
print("host hop piece 0 :", q(hostlat))
print("LAN send posted  :", q(lanS))
print("LAN hop piece 0  :", q(lanlat))
print("first WAN send   :", q(fws))
print("last WAN arrival spread:", q(spread))
