import sys,re,statistics as st
d={}
loads=[]
for line in open(sys.argv[1]):
    f=line.split()
    if len(f)<6: continue
    v=f[0]; load=float(f[2].split('=')[1]); name=f[3]; loads.append(load)
    m=dict()
    for i in range(len(f)):
        if f[i] in ('ns/op','cpu-s/GB','allocs/op','B/op','MB/s'): m[f[i]]=float(f[i-1])
    d.setdefault((name,v),[]).append(m)
print("load min/median/max %.1f/%.1f/%.1f, rounds per variant: %d"%(min(loads),st.median(loads),max(loads),len(next(iter(d.values())))))
names=sorted(set(k[0] for k in d))
for n in names:
    for key in ('cpu-s/GB','ns/op','allocs/op','B/op'):
        b=[x[key] for x in d[(n,'base')]]; w=[x[key] for x in d[(n,'new')]]
        mb,mw=st.median(b),st.median(w)
        print("%-42s %-9s base med %10.4g [%.4g..%.4g]  new med %10.4g [%.4g..%.4g]  new/base %.3f"%(n.replace('BenchmarkSendPath/',''),key,mb,min(b),max(b),mw,min(w),max(w),mw/mb))
