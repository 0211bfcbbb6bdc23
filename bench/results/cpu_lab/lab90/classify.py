#!/usr/bin/env python3
# classify.py FILE...: perf script output (with callchains) -> share by family.
# A sample's family: the kernel part by its syscall (or fault/irq), else the
# user part by the innermost frame that names a family (leaf first).
import sys, re, collections
K = [
 (r'__x64_sys_sendmmsg|__sys_sendmmsg', 'k:sendmmsg'),
 (r'__x64_sys_recvmmsg|__sys_recvmmsg', 'k:recvmmsg'),
 (r'__x64_sys_epoll_pwait|do_epoll_wait', 'k:epoll_pwait'),
 (r'__x64_sys_futex', 'k:futex'),
 (r'__x64_sys_nanosleep|hrtimer_nanosleep', 'k:nanosleep'),
 (r'__x64_sys_sched_yield', 'k:sched_yield'),
 (r'process_vm_rw|process_vm_readv', 'k:process_vm_readv'),
 (r'asm_exc_page_fault', 'k:pagefault'),
 (r'__x64_sys_', 'k:other syscall'),
 (r'asm_sysvec|asm_common_interrupt|irq_exit|do_softirq|__do_softirq', 'k:irq/softirq'),
 (r'schedule|finish_task_switch', 'k:sched'),
]
U = [
 (r'runtime\.(mallocgc|newobject|makeslice|growslice|gcBgMarkWorker|gcDrain|bgsweep|bgscavenge|gcAssist|scanobject|markroot|gcStart|memclrNoHeapPointers)', 'go:gc/alloc'),
 (r'runtime\.(runTimer|runtimer|timerWhen|\(\*timer\)|\(\*timers\)|modtimer|resettimer|addtimer|deltimer|goFunc)|time\.(AfterFunc|Timer|sendTime|\(\*Timer\))', 'go:timers'),
 (r'runtime\.(findRunnable|schedule|park_m|mcall|gopark|goready|ready|netpoll|stealWork|wakep|startm|stopm|notesleep|notewakeup|futexsleep|futexwakeup|chansend|chanrecv|selectgo|newproc|goexit|lock2|unlock2|usleep|procyield|runqgrab|semacquire|semrelease|sync_runtime)', 'go:sched/chan/wake'),
 (r'runtime\.sysmon', 'go:sysmon'),
 (r'hash/crc32', 'crc32'),
 (r'crypto/', 'auth (gcm)'),
 (r'runtime\.memmove', 'memmove'),
 (r'transport/metaroce\.\(\*conn\)\.(acceptData|handle|onData|onAck)|metaroce\.\(\*Endpoint\)\.HandleDatagram|HandleDatagram', 'core:HandleDatagram'),
 (r'PollTransmit|metaroce\.\(\*path\)|metaroce\.\(\*conn\)\.(send|transmit|poll)', 'core:PollTransmit'),
 (r'HandleTimeout|NextTimeout', 'core:timeouts'),
 (r'transport/metaroce\.', 'core:other'),
 (r'metaroce/udpio', 'adapter:udpio'),
 (r'mrtransport\.', 'adapter:mrtransport'),
 (r'internal/poll|syscall\.|golang.org/x/sys', 'go:syscall glue'),
 (r'bench|collective|reduce', 'bench/collective'),
 (r'runtime\.', 'go:runtime other'),
]
def cls(frames):
    kern = [f for f in frames if f[1]]
    user = [f[0] for f in frames if not f[1]]
    if kern:
        ks = ' '.join(f[0] for f in kern)
        for pat, c in K:
            if re.search(pat, ks):
                # a syscall's user-side caller family
                return c
        return 'k:other'
    for fn in user:
        for pat, c in U:
            if re.search(pat, fn):
                return c
    return 'other'
tot = collections.Counter()
for fname in sys.argv[1:]:
    frames = []; started = False
    for line in open(fname, errors='replace'):
        if not line.strip():
            if frames: tot[cls(frames)] += 1
            frames = []; continue
        if not line.startswith('\t') and not line.startswith(' '):
            frames = []; continue
        parts = line.split(None, 1)
        if len(parts) < 2: continue
        sym = parts[1].rsplit(' (', 1)
        name = re.sub(r'\+0x[0-9a-f]+$', '', sym[0])
        isk = 'kernel.kallsyms' in line
        frames.append((name, isk))
    if frames: tot[cls(frames)] += 1
n = sum(tot.values())
for c, k in tot.most_common():
    print(f"{k:7d} {100*k/n:5.1f}% {c}")
print(f"{n:7d} total")
import os
if os.environ.get('SHOW'):
    want = os.environ['SHOW']; leaf = collections.Counter()
    for fname in sys.argv[1:]:
        frames = []
        for line in open(fname, errors='replace'):
            if not line.strip():
                if frames and cls(frames) == want: leaf[frames[0][0] + ' <- ' + (frames[1][0] if len(frames)>1 else '')] += 1
                frames = []; continue
            if not line[0].isspace(): frames = []; continue
            parts = line.split(None, 1)
            if len(parts) < 2: continue
            frames.append((re.sub(r'\+0x[0-9a-f]+$', '', parts[1].rsplit(' (', 1)[0]), 'kernel.kallsyms' in line))
    for k, v in leaf.most_common(15): print(v, k)
