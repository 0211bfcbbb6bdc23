import sys,re,subprocess,collections
# wakelat.py RAWDIR: the job's threads' wake-up -> run latency (ms), over the whole perf record
d=sys.argv[1]
job=set()
for line in open(d+'/pids'):
    f=line.split()
    if f and not f[0].endswith('r'): job.update(map(int,f[1:]))
ev=subprocess.run(['perf','script','-i',d+'/perf.data','-F','pid,tid,time,event,trace'],capture_output=True,text=True).stdout
tg={}; woke={}; lat=[]
for line in ev.splitlines():
    m=re.match(r'\s*(\d+)/(\d+)\s+([0-9.]+):\s+sched:(\w+):\s+(.*)',line)
    if not m: continue
    tg[int(m.group(2))]=int(m.group(1)); t=float(m.group(3))
    if m.group(4)=='sched_wakeup':
        p=int(re.search(r' pid=(\d+)',m.group(5)).group(1)); woke.setdefault(p,t)
    else:
        n=int(re.search(r'next_pid=(\d+)',m.group(5)).group(1))
        if n in woke:
            w=woke.pop(n)
            if tg.get(n) in job: lat.append((t-w)*1e3)
lat.sort(); n=len(lat)
print("job wake-ups %d; latency ms p50 %.3f p90 %.3f p99 %.3f max %.2f; mean %.3f; >0.5ms %.1f%% >1ms %.1f%%"%(n,lat[n//2],lat[int(.9*n)],lat[int(.99*n)],lat[-1],sum(lat)/n,100*sum(1 for x in lat if x>.5)/n,100*sum(1 for x in lat if x>1)/n))
