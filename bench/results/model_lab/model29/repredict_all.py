#!/usr/bin/env python3
"""repredict_all.py BASE NEW RAWFILE.txt...: every model_lab run (its raw
.txt beside its .topo.json) re-predicted by two gocoll binaries: the run's
out-of-place mean (rank 0's table row, the slowest rank's mean) over each
binary's prediction of the algorithm it ran. A tree run is priced on the
channels it ran (the BASE model's choice, `on N channels` in its explain
line, which the job's Config.Channels 0 took; model30), so that NEW prices
what ran, not what it would choose. Prints one line per run, then per size and algorithm the
median ratio and the count within 0.85-1.15, and what NEW would choose for
the tree's channels where that differs."""
import re, subprocess, sys, collections, statistics as st, os
UNIT = {'ns': 1e-9, 'µs': 1e-6, 'us': 1e-6, 'ms': 1e-3, 's': 1}
def sec(t):
    m = re.match(r'([0-9.]+)(ns|µs|us|ms|s)$', t.strip()); return float(m.group(1)) * UNIT[m.group(2)]
cache = {}
def explain(g, f, b, ch=0):
    k = (g, f, b, ch)
    if k in cache: return cache[k]
    p = subprocess.run([g, 'topo', '--explain', str(b), '--topology', f, '--coll', 'allreduce', '--chunk', '2097152', '--channels', str(ch)], capture_output=True, text=True)
    rows = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if not w or line.startswith('#') or w[0] == 'algorithm': continue
        ts = [x for x in re.sub(r'\(chosen.*$', '', line).split() if re.match(r'^[0-9.]+(ns|µs|ms|s)$', x)]
        if ts: rows[w[0]] = sec(ts[-1])
        c = re.search(r'on (\d+) channels', line)
        rows['_ch_' + w[0]] = int(c.group(1)) if c else 1
        if 'chosen' in line: rows['_chosen'] = w[0]
    cache[k] = rows
    return rows
base, new = sys.argv[1:3]
agg = collections.defaultdict(lambda: ([], []))
for f in sys.argv[3:]:
    topo = f[:-4] + '.topo.json'
    if not os.path.exists(topo): continue
    name = os.path.basename(f).split('.')
    algo, size = name[1], name[2]
    b = {'8': 8, '64K': 65536, '4M': 4194304, '256M': 268435456}.get(size)
    if b is None: continue
    txt = open(f, errors='replace').read()
    m = re.search(r'^\[rank 0\]\s+%d\s+\d+\s+float32\s+sum\s+-1\s+([0-9.]+)' % b, txt, re.M)
    if not m: continue
    mean = float(m.group(1)) * 1e-6
    ran = algo
    if algo == 'auto':
        r = re.search(r'algo=([a-z-]+) bytes=%d ' % b, txt)
        if not r: continue
        ran = r.group(1)
    pb = explain(base, topo, b)
    ch = pb.get('_ch_' + ran, 1) if ran == 'tree' else 0
    pn = explain(new, topo, b, ch)
    free = explain(new, topo, b)
    if ran not in pb or ran not in pn: continue
    rb, rn = mean / pb[ran], mean / pn[ran]
    note = ''
    if ran == 'tree' and free.get('_ch_tree') != ch:
        note = ' (new would run the tree on %d channels: %.4g)' % (free.get('_ch_tree'), free['tree'])
    print('%s %s %s mean %.4g base %.4g (%.2f) new %.4g (%.2f) chooses %s -> %s%s' % (f, algo, size, mean, pb[ran], rb, pn[ran], rn, pb.get('_chosen'), free.get('_chosen'), note))
    a = agg[(b, algo)]; a[0].append(rb); a[1].append(rn)
print('\n| size | algorithm | runs | median mean/base | in band base | median mean/new | in band new |')
print('|---|---|---|---|---|---|---|')
for (b, algo) in sorted(agg):
    x, y = agg[(b, algo)]
    band = lambda v: sum(1 for r in v if 0.85 <= r <= 1.15)
    print('| %d | %s | %d | %.2f | %d | %.2f | %d |' % (b, algo, len(x), st.median(x), band(x), st.median(y), band(y)))
