#!/usr/bin/env python3
"""calls.py MODE ... : rank 0's AllReduce calls (its COLL lines) in
model_lab runs (raw/*.ALGO.SIZE.ROUND.txt beside .topo.json).

  index BYTES RAW...        per algorithm, each call's time over its run's
                            median, by call index (0 the first warm-up),
                            averaged over the runs
  first GOCOLL SIZE RAW...  per algorithm, the first timed call (after the
                            warm-ups and the bench's barrier) and the mean
                            of the other timed out-of-place calls, each
                            over the model's prediction (GOCOLL topo
                            --explain) on the run's own topology file"""
import re, sys, os, subprocess, collections, statistics as st
U = {'ns': 1e-9, 'µs': 1e-6, 'ms': 1e-3, 's': 1}
BYTES = {'8': 8, '64K': 65536, '4M': 4194304, '256M': 268435456}
ITERS = {8: (5, 50), 65536: (5, 50), 4194304: (1, 5), 268435456: (1, 2)}  # model_lab's -w, -n

def took(path, b):
    """The algorithm rank 0 ran and its calls of b bytes, in seconds, in order."""
    ts, ran = [], None
    for line in open(path, errors='replace'):
        m = re.match(r'^\[rank 0\] .*op=[Aa]ll[Rr]educe algo=(\S+) bytes=%d took=([0-9.]+)(ns|µs|ms|s)\b' % b, line)
        if m:
            ts.append(float(m.group(2)) * U[m.group(3)])
            ran = m.group(1)
    return ran, ts

def predicted(g, topo, b, algo):
    out = subprocess.run([g, 'topo', '--explain', str(b), '--topology', topo, '--coll', 'allreduce',
                          '--chunk', '2097152'], capture_output=True, text=True).stdout
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == algo:
            t = [y for y in re.sub(r'\(chosen.*$', '', line).split() if re.match(r'^[0-9.]+(ns|µs|ms|s)$', y)][-1]
            m = re.match(r'([0-9.]+)(ns|µs|ms|s)$', t)
            return float(m.group(1)) * U[m.group(2)]

def index(b, files):
    acc = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in files:
        ran, ts = took(f, b)
        if len(ts) < 4:
            continue
        algo = os.path.basename(f).split('.')[1]
        algo = 'auto:' + ran if algo == 'auto' else algo
        med = st.median(ts[1:12])
        for i, t in enumerate(ts[:14]):
            acc[algo][i].append(t / med)
    for a in sorted(acc):
        print('%-22s n=%2d ' % (a, len(acc[a][0])) + ' '.join('%.2f' % st.mean(acc[a][i]) for i in sorted(acc[a])))

def first(g, size, files):
    b = BYTES[size]
    w, n = ITERS[b]
    acc = collections.defaultdict(list)
    for f in files:
        topo = f[:-4] + '.topo.json'
        ran, ts = took(f, b)
        if not os.path.exists(topo) or len(ts) < w + n:
            continue
        p = predicted(g, topo, b, ran)
        if p:
            timed = ts[w:w + n]
            acc[os.path.basename(f).split('.')[1]].append((timed[0] / p, st.mean(timed[1:]) / p))
    for a in sorted(acc):
        v = acc[a]
        print('%-13s %s n=%2d first/predicted median %.2f  rest/predicted median %.2f' % (
            a, size, len(v), st.median(x for x, _ in v), st.median(y for _, y in v)))

if __name__ == '__main__':
    if sys.argv[1] == 'index':
        index(int(sys.argv[2]), sys.argv[3:])
    else:
        first(sys.argv[2], sys.argv[3], sys.argv[4:])
