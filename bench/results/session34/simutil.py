import re,sys
rows=[]
for line in open(sys.argv[1]):
    m=re.search(r't=\s*(\d+)ms(.*)$',line)
    if not m: continue
    t=int(m.group(1)); a=b=0
    for s,d,kb in re.findall(r'(\d+)>(\d+):(\d+)',m.group(2)):
        if int(s)<4: a+=int(kb)
        else: b+=int(kb)
    rows.append((t,a,b))
# split calls where t resets
calls=[];cur=[]
for r in rows:
    if cur and r[0]<cur[-1][0]: calls.append(cur);cur=[]
    cur.append(r)
calls.append(cur)
cap=200.0 # kB per 2ms per direction
for c in calls:
    T=c[-1][0]
    tot_a=sum(r[1] for r in c); tot_b=sum(r[2] for r in c)
    line=[]
    for lo,hi in [(0,10),(10,30),(30,60),(60,T-20),(T-20,T+2)]:
        seg=[r for r in c if lo<r[0]<=hi]
        if not seg: continue
        ua=sum(r[1] for r in seg)/(cap*len(seg)); ub=sum(r[2] for r in seg)/(cap*len(seg))
        line.append("%d-%d:%.0f/%.0f%%"%(lo,hi,100*ua,100*ub))
    print("call %d ms: "%T + " ".join(line), "lost(ms) a %.1f b %.1f"%(T-tot_a/100.0, T-tot_b/100.0))
