#!/usr/bin/env python3
# supply.py PREFIX.SEED: from TestWANSimHierarchical's send samples
# (WAN_SIM_SAMPLES, virtual time, 1 ms), per direction, the ms in which the
# direction's 4 owner connections sent under half the 4 links' 100 kB/ms,
# split by how many of them had posted bytes unsent at the ms's start:
# 0 (nothing to send: the collective's supply) or 1-4 (the transport held
# posted data). Call boundaries are not used: the ms from the first to the
# last sample with data are counted (calls and the gaps between them);
# with the test's -v log as a second argument, split by phase of the call
# (its first 40 ms, its last 40 ms before the next call's start, the middle).
import sys, glob, collections
import re
pre = sys.argv[1]
starts = []  # call starts, ms since the sampler's start (TestWANSimHierarchical's -v log, argv[2])
if len(sys.argv) > 2:
    for l in open(sys.argv[2]):
        m = re.search(r'seed \d+ call (\d+) starts at (\d+)', l)
        if m: starts.append((int(m.group(2)) - 946684800000000000) // 1_000_000)
starts.sort()
S = collections.defaultdict(dict)  # dir -> {(r,p): {ms: (sent, unsent)}}
for f in glob.glob(pre + '.*'):
    for l in open(f):
        if l[0] == '#': continue
        v = l.split(); r, at, p = int(v[0]), int(v[1]) // 1000, int(v[2])
        if (r < 4) == (p < 4) or (p - r) % 4: continue  # owner pairs r <-> r+4
        S[int(r >= 4)].setdefault((r, p), {})[at] = (int(v[14]), int(v[4]))
for d in (0, 1):
    conns = S[d]
    lo = min(min(m) for m in conns.values()); hi = max(max(m) for m in conns.values())
    cnt = collections.Counter(); low = 0; tot = 0; pc = collections.Counter()
    last = {k: 0 for k in conns}
    for t in range(lo, hi + 1):
        sent = 0; busy = 0
        for k, m in conns.items():
            if t in m:
                s, u = m[t]; sent += s - last[k]; last[k] = s
                busy += u > 0
        tot += 1
        if sent < 50_000:
            low += 1; cnt[busy] += 1
            if starts:
                i = max([j for j, x in enumerate(starts) if x <= t] or [0])
                end = starts[i + 1] if i + 1 < len(starts) else hi
                ph = 'first40' if t - starts[i] < 40 else ('last40' if end - t <= 40 else 'middle')
                pc[ph, 'supply' if busy == 0 else 'transport'] += 1
    print('dir %d: %d ms, %d under half the links; of those, conns with unsent: %s' % (d, tot, low, ' '.join('%d:%d' % kv for kv in sorted(cnt.items()))))
    if starts:
        print('  by phase (ms under half; supply: no conn had unsent, transport: some had): ' + ' '.join('%s/%s %d' % (a, b, n) for (a, b), n in sorted(pc.items())))
