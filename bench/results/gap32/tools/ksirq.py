import sys,re,subprocess,collections
# ksirq.py RAWDIR: ksoftirqd/N wake->run latency distribution and run time over the job
d=sys.argv[1]
ev=subprocess.run(['perf','script','-i',d+'/perf.data','-F','pid,tid,cpu,time,event,trace'],capture_output=True,text=True).stdout
woke={}; lat=collections.defaultdict(list); runt=collections.Counter(); cur={}
for line in ev.splitlines():
    m=re.match(r'\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([0-9.]+):\s+sched:(\w+):\s+(.*)',line)
    if not m: continue
    cpu=int(m.group(3)); t=float(m.group(4)); evn=m.group(5); rest=m.group(6)
    if evn=='sched_wakeup':
        mm=re.search(r'comm=(\S+) pid=(\d+)',rest)
        if mm.group(1).startswith('ksoftirqd'): woke.setdefault(mm.group(1),t)
    else:
        mm=re.search(r'prev_comm=(.*) prev_pid=(\d+) .* ==> next_comm=(.*) next_pid=(\d+)',rest)
        pc,nc=mm.group(1),mm.group(3)
        if cpu in cur and cur[cpu][0].startswith('ksoftirqd'): runt[cur[cpu][0]]+=t-cur[cpu][1]
        cur[cpu]=(nc,t)
        if nc.startswith('ksoftirqd') and nc in woke:
            lat[nc].append((t-woke.pop(nc))*1e3)
for k,v in sorted(lat.items()):
    v.sort(); n=len(v)
    print(k,"wakeups",n,"run %.1f ms"%(runt[k]*1e3),"latency ms p50 %.3f p90 %.3f p99 %.3f max %.2f; >1ms: %d, >3ms: %d"%(v[n//2],v[int(n*.9)],v[int(n*.99)],v[-1],sum(1 for x in v if x>1),sum(1 for x in v if x>3)))
