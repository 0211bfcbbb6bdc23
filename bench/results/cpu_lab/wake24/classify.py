import sys, collections
rules = [('netpoll-idle (findRunnable)', ['runtime.findRunnable']), ('sched_yield (spin)', ['yieldCPU']),
 ('spin Poller.Ready', ['Poller).Ready']), ('recvmmsg', ['recv']), ('sendmmsg', ['writer).send']),
 ('crc', ['crc32']), ('memmove', ['memmove']), ('timer', ['timerLoop', 'runtime.runtimer', 'runTimer']),
 ('Gosched', ['runtime.Gosched', 'gosched_m']), ('sysmon', ['runtime.sysmon']), ('GC', ['gcBgMark', 'gcDrain', 'mallocgc']),
 ('handle (core)', ['HandleDatagram', 'handleBatch', 'process', 'poll']), ('schedule other', ['runtime.schedule', 'runtime.park_m', 'mcall'])]
c = collections.Counter(); tot = 0
for blk in sys.stdin.read().split('\n\n'):
    L = blk.strip().split('\n')
    if len(L) < 2 or 'gocoll' not in L[0]: continue
    tot += 1; st = '\n'.join(L[1:])
    for name, keys in rules:
        if any(k in st for k in keys): c[name] += 1; break
    else: c['other'] += 1
for k, v in c.most_common(): print(f'{100*v/tot:5.1f}% {k}')
print('samples', tot)
