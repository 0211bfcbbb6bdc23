#!/usr/bin/env python3
# Merge the A/B invocations' tables: per side, per (size, algo), the round with the lowest mean (as model_lab.sh does), and the WAN figures of every run.
import json, glob, os, re, sys, statistics
S = sys.argv[1]
def sec(t):
    t = t.strip()
    m = re.match(r'([0-9.]+) *(ms|us|µs|s|ns)?$', t)
    if not m: return None
    v = float(m.group(1)); u = m.group(2) or 's'
    return v * {'s':1,'ms':1e-3,'us':1e-6,'µs':1e-6,'ns':1e-9}[u]
sides = {}
for side in ['before', 'after']:
    rows = {}; wans = []; tooks = []; loads = []
    for d in sorted(glob.glob(f'{S}/{side}.r[0-9]')):
        tbl = open(f'{d}/table.md').read().splitlines()
        hdr = [l for l in tbl if l.startswith('| size |')][0]
        cols = [c.strip() for c in hdr.strip('|').split('|')]
        head = [l for l in tbl if l.startswith('Run ')][0]
        loads.append(re.search(r'load average \(1/5/15 min\) (.*?) before, (.*?) after', head).groups())
        for l in tbl:
            if not l.startswith('| ') or l.startswith('| size') or l.startswith('|---'): continue
            c = [x.strip() for x in l.strip('|').split('|')]
            if len(c) != len(cols): continue
            r = dict(zip(cols, c))
            key = (r['size'], r['algorithm'])
            mean = sec(r['mean'])
            if mean is None: continue
            r['_dir'] = d
            if key not in rows or mean < sec(rows[key]['mean']): rows[key] = r
        for f in glob.glob(f'{d}/raw/*.topo.json'):
            w = json.load(open(f))['levels']['wan']['bandwidth'] / 1e6
            wans.append((os.path.basename(f), w))
        for f in glob.glob(f'{d}/raw/*.txt'):
            m = re.search(r'^\[rank 0\] .*msg="gocoll: link figures".* took=(\S+)', open(f, errors='replace').read(), re.M)
            if m: tooks.append(sec(m.group(1)))
    sides[side] = (rows, wans, tooks, loads)
order = {'8':0,'1K':1,'64K':2,'1M':3,'4M':4,'16M':5,'64M':6,'256M':7}
keys = sorted(set(sides['before'][0]) | set(sides['after'][0]), key=lambda k: (order.get(k[0], 9), k[1]))
print('| size | algorithm | before: mean | predicted | mean/pred | median/pred | probe WAN MB/s | after: mean | predicted | mean/pred | median/pred | probe WAN MB/s |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|')
inband = {'before': [0, 0, 0, 0], 'after': [0, 0, 0, 0]}
for k in keys:
    out = [k[0], k[1]]
    for side in ['before', 'after']:
        r = sides[side][0].get(k)
        if not r: out += ['-'] * 5; continue
        tj = glob.glob(f"{r['_dir']}/raw/*.{k[1]}.{k[0]}.1.topo.json")
        w = json.load(open(tj[0]))['levels']['wan']['bandwidth'] / 1e6 if tj else float('nan')
        mp, dp = float(r['mean/predicted']), float(r['median/predicted'])
        out += [r['mean'], r['predicted'], f"{mp:.2f}", f"{dp:.2f}", f"{w:.1f}"]
        target = k[0] in ('8', '64K', '4M', '256M')
        i = 0 if target else 2
        inband[side][i] += 0.85 <= mp <= 1.15; inband[side][i + 1] += 1
    print('| ' + ' | '.join(out) + ' |')
print()
for side in ['before', 'after']:
    rows, wans, tooks, loads = sides[side]
    ws = sorted(w for _, w in wans)
    b = inband[side]
    print(f"{side}: mean/predicted in 0.85-1.15 at the target sizes {b[0]} of {b[1]}, other sizes {b[2]} of {b[3]}; WAN figures of {len(ws)} runs: median {statistics.median(ws):.1f}, min {ws[0]:.1f}, max {ws[-1]:.1f}; <85 MB/s in {sum(w < 85 for w in ws)}, <60 in {sum(w < 60 for w in ws)}; probe took median {statistics.median(tooks)*1e3:.0f} ms (min {min(tooks)*1e3:.0f}, max {max(tooks)*1e3:.0f}, {len(tooks)} runs); load before/after per invocation {loads}")
    print('   WAN figures sorted: ' + ' '.join(f'{w:.1f}' for w in ws))
