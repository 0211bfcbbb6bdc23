import sys, subprocess, collections
G = {
 'k:sendmmsg':'kernel: send path (sendmmsg; the lab network\'s forwarding in softirq)', 'k:irq/softirq':'kernel: send path (sendmmsg; the lab network\'s forwarding in softirq)',
 'k:recvmmsg':'kernel: receive (recvmmsg)',
 'k:epoll_pwait':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)', 'k:futex':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)', 'k:nanosleep':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)', 'k:sched':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)', 'k:sched_yield':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)', 'k:other':'sleep/wake: kernel (epoll_pwait, futex, nanosleep, switch, syscall exit)',
 'go:sched/chan/wake':'sleep/wake: Go scheduler (findRunnable, netpoll, park/ready, M wake)', 'go:runtime other':'sleep/wake: Go scheduler (findRunnable, netpoll, park/ready, M wake)', 'go:sysmon':'sleep/wake: Go scheduler (findRunnable, netpoll, park/ready, M wake)',
 'go:timers':'timers (Go timer, onTimer)',
 'core:HandleDatagram':'core state machine', 'core:PollTransmit':'core state machine', 'core:other':'core state machine', 'core:timeouts':'core state machine',
 'adapter:mrtransport':'adapter (mrtransport, udpio, syscall glue)', 'adapter:udpio':'adapter (mrtransport, udpio, syscall glue)', 'go:syscall glue':'adapter (mrtransport, udpio, syscall glue)', 'k:other syscall':'adapter (mrtransport, udpio, syscall glue)',
 'memmove':'copies (memmove)', 'crc32':'CRC32C and header auth (GCM)', 'auth (gcm)':'CRC32C and header auth (GCM)',
 'go:gc/alloc':'GC and allocation', 'k:pagefault':'page faults', 'bench/collective':'bench', 'other':'other', 'k:process_vm_readv':'shm copies (process_vm_readv)'}
us = [float(x) for x in sys.argv[1].split(',')]
res = []
for f in sys.argv[2:]:
    c = collections.Counter()
    out = subprocess.run(['python3',__import__('os').path.join(__import__('os').path.dirname(__file__), 'classify.py'),f],capture_output=True,text=True).stdout
    for line in out.splitlines():
        p = line.split(None,2)
        if p[-1]=='total': continue
        c[G.get(p[2],p[2])] += int(p[0])
    res.append(c)
keys = sorted(set().union(*res), key=lambda k: -sum(r[k]/sum(r.values())*u for r,u in zip(res,us)))
print('| family | ' + ' | '.join(f'{n} % / us per DATA dg' for n in ['sender','receiver'][:len(res)]) + ' | both, us/dg |')
print('|---|'+'---|'*(len(res)+1))
for k in keys:
    cells = []; t=0
    for r,u in zip(res,us):
        s = r[k]/sum(r.values()); cells.append(f'{100*s:.1f} % / {s*u:.1f}'); t+=s*u
    print(f'| {k} | ' + ' | '.join(cells) + f' | {t:.1f} |')
print('| total | ' + ' | '.join(f'100 % / {u:.1f}' for u in us) + f' | {sum(us):.1f} |')
