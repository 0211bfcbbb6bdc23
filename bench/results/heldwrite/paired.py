import sys,statistics as st
# per-round new/base ratios of cpu-s/GB, paired by round
for f in sys.argv[1:]:
    d={}
    for line in open(f):
        x=line.split()
        if len(x)<6: continue
        v=x[0]; r=x[1]; name=x[3].replace('BenchmarkSendPath/','')
        c=float(x[x.index('cpu-s/GB')-1])
        d.setdefault(name,{}).setdefault(r,{})[v]=c
    for name in sorted(d):
        rs=[d[name][r]['new']/d[name][r]['base'] for r in d[name] if 'new' in d[name][r] and 'base' in d[name][r]]
        print("%s %-22s paired new/base cpu-s/GB: median %.3f, new higher in %d of %d rounds"%(f,name,st.median(rs),sum(1 for x in rs if x>1),len(rs)))
