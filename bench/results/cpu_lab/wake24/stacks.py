import sys, re, collections
# perf script output on stdin; argv[1]: event substring; argv[2]: depth
ev, depth = sys.argv[1], int(sys.argv[2])
skip = re.compile(r'^(runtime\.(entersyscall|exitsyscall|reentersyscall|syscall|Syscall|RawSyscall|futex|epollwait|osyield|usleep|netpoll)|internal/runtime/syscall|syscall\.|golang\.org/x/sys/unix\.|__schedule|schedule$|do_syscall|entry_SYSCALL|\[unknown\])')
c = collections.Counter(); tot = 0
for blk in sys.stdin.read().split('\n\n'):
    L = blk.strip().split('\n')
    if not L or ev not in L[0]: continue
    if 'gocoll' not in L[0].split()[0]: continue
    tot += 1
    fr = []
    for l in L[1:]:
        p = l.split()
        if len(p) < 2: continue
        s = re.sub(r'\+0x[0-9a-f]+$', '', p[1])
        if skip.match(s) or 'kallsyms' in l: continue
        fr.append(s)
        if len(fr) >= depth: break
    c[' <- '.join(fr)] += 1
print(f'{ev}: {tot}')
for k, v in c.most_common(14): print(f'{v:7d} {100*v/max(tot,1):5.1f}% {k}')
