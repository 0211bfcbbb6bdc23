#!/usr/bin/env python3
"""reprice_cold.py [--cold HOST,SITE,WAN] BIN... -- RAWFILE.txt...: each
model_lab run (its raw .txt beside its .topo.json) priced by each gocoll
binary: the run's out-of-place mean (rank 0's table row, the slowest rank's
mean) over the prediction of the algorithm it ran, and each binary's
choice (explain's 'chosen'). The prediction is made on the run's file as
recorded, and with its levels' "latency_cold" taken out ('-cold'). With
--cold, each level's cold latency is set to its latency plus the given
excess in microseconds (a transplant, for files recorded before the
field: a sensitivity, not a measurement). Prints one line per run, then
per size and algorithm the median ratio and the count within 0.85-1.15."""
import re, subprocess, sys, collections, statistics as st, os, json, tempfile
UNIT = {'ns': 1e-9, 'µs': 1e-6, 'us': 1e-6, 'ms': 1e-3, 's': 1}
def sec(t):
    m = re.match(r'([0-9.]+)(ns|µs|us|ms|s)$', t.strip()); return float(m.group(1)) * UNIT[m.group(2)]
def explain(g, f, b):
    p = subprocess.run([g, 'topo', '--explain', str(b), '--topology', f, '--coll', 'allreduce', '--chunk', '2097152'], capture_output=True, text=True)
    rows = {}
    for line in p.stdout.splitlines():
        w = line.split()
        if not w or line.startswith('#') or w[0] == 'algorithm': continue
        ts = [x for x in re.sub(r'\(chosen.*$', '', line).split() if re.match(r'^[0-9.]+(ns|µs|ms|s)$', x)]
        if ts: rows[w[0]] = sec(ts[-1])
        if 'chosen' in line: rows['_chosen'] = w[0]
    return rows
args = sys.argv[1:]
cold = None
if args[0] == '--cold':
    cold = [float(x) for x in args[1].split(',')]; args = args[2:]
sep = args.index('--')
bins, files = args[:sep], args[sep + 1:]
tmp = tempfile.mkdtemp(prefix='m31cold')
def variant(topo, keep):
    d = json.load(open(topo))
    for i, name in enumerate(['host', 'site', 'wan']):
        l = d.get('levels', {}).get(name)
        if l is None: continue
        if cold is not None and keep:
            l['latency_cold'] = '%dns' % round(sec(l['latency']) * 1e9 + cold[i] * 1e3)
        elif not keep:
            l.pop('latency_cold', None)
    out = os.path.join(tmp, os.path.basename(topo) + ('.cold' if keep else '.hot'))
    json.dump(d, open(out, 'w')); return out
agg = collections.defaultdict(lambda: collections.defaultdict(list))
for f in files:
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
    withc, without = variant(topo, True), variant(topo, False)
    parts = []
    for g in bins:
        for tag, tf in (('', withc), ('-cold', without)):
            p = explain(g, tf, b)
            if ran not in p: continue
            key = os.path.basename(g) + tag
            parts.append('%s %.4g (%.2f) %s' % (key, p[ran], mean / p[ran], p.get('_chosen')))
            agg[(b, algo)][key].append(mean / p[ran])
    print('%s %s %s mean %.4g | %s' % (f, algo, size, mean, ' | '.join(parts)))
print('\n| size | algorithm | runs | ' + ' | '.join('%s median (in band)' % k for k in next(iter(agg.values())).keys()) + ' |')
for (b, algo) in sorted(agg):
    a = agg[(b, algo)]
    band = lambda v: sum(1 for r in v if 0.85 <= r <= 1.15)
    print('| %d | %s | %d | ' % (b, algo, len(next(iter(a.values())))) + ' | '.join('%.2f (%d)' % (st.median(v), band(v)) for v in a.values()) + ' |')
