import gzip,sys,re,datetime,collections
# tail.py RAWDIR: per call and direction, each source port's last data packet (ms from the call's start), sorted, and the call's end
d=sys.argv[1]; size=16777216
calls={}
for line in open(d+'/out',errors='replace'):
    m=re.match(r'\[rank (\d+)\] time=(\S+) .*msg="gocoll: coll" .*seq=(\d+) op=(\w+) .* bytes=(\d+) took=([0-9.]+)(ms|s)$',line.rstrip())
    if not m or m.group(4)!='AllReduce' or int(m.group(5))!=size: continue
    e=datetime.datetime.fromisoformat(m.group(2).replace('Z','+00:00')).timestamp(); t=float(m.group(6))/(1000 if m.group(7)=='ms' else 1)
    lo,hi=calls.get(int(m.group(3)),(1e20,0)); calls[int(m.group(3))]=(min(lo,e-t),max(hi,e))
pk=[]; start=0
for line in gzip.open(d+'/trace.gz','rt'):
    if line.startswith('# start'): start=int(line.split()[2]); continue
    if line.startswith('#'): continue
    q,l,sp,a,du,r=map(int,line.split())
    if l>1000: pk.append((start+a,q//256,sp))
for s in sorted(calls)[1:]:
    lo,hi=calls[s]; lo=int(lo*1e9); hi=int(hi*1e9)
    out=[]
    for dr in (1,2):
        last=collections.defaultdict(int); n=collections.Counter()
        for t,q,sp in pk:
            if lo<=t<=hi and q==dr: last[sp]=max(last[sp],t); n[sp]+=1
        ends=sorted((v-lo)/1e6 for k,v in last.items() if n[k]>=20)
        out.append('dir %d: %d ports, last data at %s'%(dr,len(ends),' '.join('%.0f'%e for e in ends)))
    print('call %d (%.0f ms): %s'%(s,(hi-lo)/1e6,' | '.join(out)))
