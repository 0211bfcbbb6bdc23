import sys,re,subprocess,collections
# preempt.py RAWDIR: switches from a runnable (preempted) job thread to a delay daemon thread, and the daemons' switch-ins, over the perf record
d=sys.argv[1]
job=set(); dae=set()
for line in open(d+'/pids'):
    f=line.split()
    (dae if f and f[0].endswith('r') else job).update(map(int,f[1:]))
ev=subprocess.run(['perf','script','-i',d+'/perf.data','-F','pid,tid,time,event,trace'],capture_output=True,text=True).stdout
tg={}; pre=0; ins=0; t0=t1=None
for line in ev.splitlines():
    m=re.match(r'\s*(\d+)/(\d+)\s+([0-9.]+):\s+sched:sched_switch:\s+(.*)',line)
    if not m: continue
    tg[int(m.group(2))]=int(m.group(1))
    mm=re.search(r'prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(\d+) next_prio=(\d+)',m.group(4))
    if int(mm.group(4))<100 and tg.get(int(mm.group(3)),-1) in dae or int(mm.group(4))<100 and int(mm.group(3)) not in tg:
        ins+=1
        if tg.get(int(mm.group(1))) in job and mm.group(2).startswith('R'): pre+=1
    t=float(m.group(3)); t0=t0 or t; t1=t
print("over %.1f s: RT (daemon) switch-ins %d (%.0f/s), of which preempting a runnable job thread %d (%.0f/s)"%(t1-t0,ins,ins/(t1-t0),pre,pre/(t1-t0)))
