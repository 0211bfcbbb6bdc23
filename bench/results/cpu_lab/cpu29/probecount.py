#!/usr/bin/env python3
"""probecount.py DIR CALLS: uprobe hits a call ((n8 - n2)/CALLS) by event and goroutine root, from DIR/n{2,8}/all.txt
(perf script -F event,ip,sym of probe.sh's perf files); with -chains, the callers of each wake of sysmon."""
import sys, re, collections
ROOTS = ['coalesceLoop', 'timerLoop', 'SpinAny', 'drainBeforeTimers', 'mrtransport.(*Endpoint).Send', 'Recv', 'Spin']
def load(path, chains):
    c = collections.Counter(); ev = None; fr = []
    for line in open(path):
        if not line.strip():
            if ev:
                if chains:
                    if ev in ('wakesysmon',): c[(ev, ";".join(fr[1:7]))] += 1
                    else: c[(ev, 'ALL')] += 1
                else:
                    root = next((r for r in ROOTS if any(r in f for f in fr)), 'other (the endpoint reader: a uprobe at entry loses the caller)')
                    c[(ev, root)] += 1; c[(ev, 'ALL')] += 1
            ev = None; fr = []; continue
        m = re.match(r'\s*probe_gocoll:(\w+):', line)
        if m: ev = m.group(1); continue
        t = line.split()
        if len(t) >= 2: fr.append(re.sub(r'github.com/gocoll/gocoll/', '', t[1]))
    return c
chains = '-chains' in sys.argv
D, n = sys.argv[1], float(sys.argv[2])
a, b = load(D + '/n2/all.txt', chains), load(D + '/n8/all.txt', chains)
for k in sorted(set(a) | set(b), key=lambda k: (k[0], -(b[k] - a[k]))):
    v = (b[k] - a[k]) / n
    if abs(v) >= 0.5: print(f"{v:9.1f}  {k[0]}  {k[1]}")
