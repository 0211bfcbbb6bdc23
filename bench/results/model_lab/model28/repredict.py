#!/usr/bin/env python3
"""repredict.py DIR BASE NEW: model28's re-prediction of a model_lab run.

The lab's measured times do not depend on the model (but for auto's
choice), so each cell of DIR/table.md (the kept round's mean) is compared
with the predictions of two gocoll binaries on that round's own topology
file (`gocoll topo --explain SIZE --topology FILE --coll allreduce --chunk
2097152`): mean/predicted base -> new, and what each chooses. Also each
binary's CPU a call (explain's CPU column)."""
import re, subprocess, sys

d, base, new = sys.argv[1:4]
UNIT = {'ns': 1e-9, 'µs': 1e-6, 'us': 1e-6, 'ms': 1e-3, 's': 1}
SIZE = {'8': 8, '64K': 65536, '4M': 4194304, '256M': 268435456}

def sec(t):
    m = re.match(r'([0-9.]+)\s*(ns|µs|us|ms|s)$', t.strip())
    return float(m.group(1)) * UNIT[m.group(2)]

def explain(g, f, b):
    out = subprocess.run([g, 'topo', '--explain', str(b), '--topology', f, '--coll', 'allreduce',
                          '--chunk', '2097152'], capture_output=True, text=True, check=True).stdout
    rows, chosen = {}, None
    for line in out.splitlines():
        w = line.split()
        if not w or line.startswith('#') or w[0] == 'algorithm':
            continue
        times = [x for x in re.sub(r'\(chosen.*$', '', line).split() if re.match(r'^[0-9.]+(ns|µs|ms|s)$', x)]
        rows[w[0]] = (sec(times[-1]), sec(times[0]) if len(times) > 1 else 0)
        if 'chosen' in line:
            chosen = w[0]
    return rows, chosen

stamp = None
print('| size | algorithm | ran | mean | base predicted | mean/base | new predicted | mean/new | base CPU | new CPU | base chooses | new chooses |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|')
for line in open(d + '/table.md'):
    c = [x.strip() for x in line.split('|')]
    if len(c) < 14 or c[1] not in SIZE or not c[13][:1].isdigit():
        continue
    size, algo, ran, mean, rnd = c[1], c[2], c[3], c[4], c[12].split()[0]
    import glob
    fs = glob.glob('%s/raw/*.%s.%s.%s.topo.json' % (d, algo, size, rnd))
    if not fs:
        continue
    f = sorted(fs)[-1]
    alg = ran.split()[0] if algo == 'auto' else algo
    (rb, cb), (rn, cn) = explain(base, f, SIZE[size]), explain(new, f, SIZE[size])
    m = sec(mean.replace(' ', ''))
    print('| %s | %s | %s | %s | %.4g | %.2f | %.4g | %.2f | %.3g | %.3g | %s | %s |' % (
        size, algo, ran, mean, rb[alg][0], m / rb[alg][0], rn[alg][0], m / rn[alg][0], rb[alg][1], rn[alg][1], cb, cn))
