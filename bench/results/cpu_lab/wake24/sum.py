import sys, re, os
d = sys.argv[1]
out = open(os.path.join(d, 'out')).read()
mib = 0
for m in re.finditer(r'# total:.*?([0-9.]+) MiB', out): mib = float(m.group(1))
eng = {}
for line in out.splitlines():
    if 'msg="mrtransport: engine"' in line:
        rk = re.search(r' rank=(\d+)', line).group(1)
        eng[rk] = {k: int(v) for k, v in re.findall(r' (\w+)=(\d+)', line) if k != 'rank'}
data = eng.get('0', {}).get('data', 0)
load = open(os.path.join(d, 'load')).read().split()[1:]
res = [f"{d}: load {load[0]}-{load[1]} MiB {mib} DATA {data}"]
for rk in ('0', '1'):
    p = os.path.join(d, 'rank.' + rk)
    if not os.path.exists(p): res.append(f" rank{rk} missing"); continue
    v = {}
    for l in open(p):
        f = l.strip().split(',')
        if len(f) > 3 and re.match(r'^[0-9.]+$', f[0]): v[f[2].replace('syscalls:sys_enter_', '')] = float(f[0])
    if data == 0: res.append(f" rank{rk} nodata"); continue
    e = eng.get(rk, {})
    res.append(f" r{rk}: cpu_us {v.get('task-clock',0)*1000/data:.1f} cs {v.get('context-switches',0)/data:.3f} epoll {v.get('epoll_pwait',0)/data:.3f} futex {v.get('futex',0)/data:.3f} yield {v.get('sched_yield',0)/data:.3f} recvmmsg {v.get('recvmmsg',0)/data:.3f} sendmmsg {v.get('sendmmsg',0)/data:.3f} nanosl {v.get('nanosleep',0)/data:.3f} rb {e.get('readBatches',0)/data:.3f} spinb {e.get('spinBatches',0)/data:.3f} timer {e.get('timerRuns',0)/data:.3f} acks {e.get('acks',0)/data:.3f}")
print('\n'.join(res))
with open(os.path.join(d, 'summary'), 'w') as f: f.write('\n'.join(res) + '\n')
