import gzip,sys,re,datetime,subprocess,collections
# prof.py RAWDIR [min_ms]: job's stack samples inside WAN all-stop episodes vs the rest of the timed calls' WAN phase
d=sys.argv[1]; minms=float(sys.argv[2]) if len(sys.argv)>2 else 1.0
mono,wall=map(int,open(d+'/clocks').read().split()); off=wall-mono
jobpids=set(); dpids=set()
for line in open(d+'/pids'):
    f=line.split()
    if f and f[0].endswith('r'): dpids.update(map(int,f[1:]))
    else: jobpids.update(map(int,f[1:]))
calls={}
for line in open(d+'/out'):
    m=re.match(r'\[rank (\d+)\] time=(\S+) .*msg="gocoll: coll" .*seq=(\d+) op=(\w+) .* bytes=(\d+) took=([0-9.]+)(ms|s)$',line)
    if not m or m.group(4)!='AllReduce' or m.group(5)!='16777216': continue
    e=datetime.datetime.fromisoformat(m.group(2).replace('Z','+00:00')).timestamp()
    t=float(m.group(6))*(1 if m.group(7)=='ms' else 1000); s=int(m.group(3))
    lo,hi=calls.get(s,(1e20,0)); calls[s]=(min(lo,e-t/1000),max(hi,e))
arr=[]; start=None
for line in gzip.open(d+'/trace.gz','rt'):
    if line.startswith('# start'): start=int(line.split()[2]); continue
    if line.startswith('#'): continue
    q,l,sp,a,du,r=map(int,line.split())
    if l>1000: arr.append(start+a)
arr.sort()
stops=[]; active=[]
for s in sorted(calls)[1:]:
    lo,hi=calls[s]; lo=int(lo*1e9); hi=int(hi*1e9)
    a=[x for x in arr if lo<=x<=hi]
    if len(a)<100: continue
    active.append((a[0],a[-1]))
    for i in range(1,len(a)):
        if (a[i]-a[i-1])/1e6>=minms: stops.append((a[i-1],a[i]))
def inside(t,iv):
    for x,y in iv:
        if x<=t<y: return True
    return False
ev=subprocess.run(['perf','script','-i',d+'/perf.data','-F','pid,tid,time,ip,sym'],capture_output=True,text=True).stdout
cnt={'stop':collections.Counter(),'run':collections.Counter()}
who={'stop':collections.Counter(),'run':collections.Counter()}
n={'stop':0,'run':0}
cur=None; stack=[]
def flush():
    if cur is None: return
    pid,t=cur
    if not inside(t,active): return
    k='stop' if inside(t,stops) else 'run'
    g='job' if pid in jobpids else ('delayd' if pid in dpids else ('idle' if pid==0 else 'other'))
    who[k][g]+=1; n[k]+=1
    if g!='job': return
    # classify by the frames
    fr=' '.join(stack)
    if 'gcBgMarkWorker' in fr or 'gcDrain' in fr or 'gcAssist' in fr or 'markroot' in fr or 'scanobject' in fr: c='gc'
    elif re.search(r'reduce\.|sumFloat|AVX', fr): c='reduce kernel'
    elif 'shm' in fr.lower(): c='shm:'+next((f for f in stack if 'shm' in f.lower()),'')
    elif 'mrtransport' in fr or 'metaroce' in fr: c='metaroce:'+next((f for f in stack if 'metaroce' in f),'')
    elif 'runtime.' in stack[0] if stack else False: c='runtime:'+stack[0]
    else: c=stack[0] if stack else '?'
    cnt[k][c]+=1
for line in ev.splitlines():
    m=re.match(r'\s*(\d+)/(\d+)\s+([0-9.]+):\s*$',line)
    if m:
        flush(); cur=(int(m.group(1)),int(float(m.group(3))*1e9)+off); stack=[]; continue
    f=line.split()
    if len(f)>=2: stack.append(f[1])
flush()
tot_stop=sum((y-x) for x,y in stops)/1e6; tot_act=sum((y-x) for x,y in active)/1e6
print("stops: %d, %.1f ms of %.1f ms WAN-active"%(len(stops),tot_stop,tot_act))
for k in ('stop','run'):
    print(k, 'samples', n[k], ' '.join('%s %.0f%%'%(g,100*v/max(1,n[k])) for g,v in who[k].most_common()))
    j=sum(cnt[k].values())
    print("   gc %.2f%% of job samples"%(100*cnt[k]["gc"]/max(1,j)))
    for c,v in cnt[k].most_common(14): print('   %5.1f%% %s'%(100*v/max(1,j),c))
