#!/usr/bin/env python3
"""m29trace.py CMD RAW [ARGS]: model29's reading of an M29_HIERTRACE run
(branch h/model29-trace: every rank logs, per hierarchical AllReduce, its
begin B, its sends s<lvl><peer> and takes r<lvl><peer> (the pipeline's
receive done, after waitRecv) and its end E, wall-clock ns mod 1e10; lvl
h host, s site, w WAN). All ranks share the machine's clock.

  show RAW CALLS   the calls given (comma list), per rank, µs from the call's
                   first begin
  hops RAW         send -> take per hop, by level and by pre (before the
                   sender's WAN take: reduce-scatter) or post (all-gather)
  chain RAW        per call and direction between sites: the site's start
                   skew, its owner's begin -> WAN send, the WAN hop and the
                   other site's WAN take -> its last end
  crit RAW LO HI   the critical path from call HI's last end back to call
                   LO: hops by level, each rank's own steps, the gap
                   between a rank's calls; per call
  gaps RAW         a rank's end -> its next begin, and its calls' lengths"""
import sys, collections, statistics as st

def load(path):
    ev = {}
    for line in open(path, errors='replace'):
        if 'M29T' not in line:
            continue
        t = line.split('M29T', 1)[1].split()
        r, c = int(t[0][1:]), int(t[2][1:])
        ev[(r, c)] = [(x.split('@')[0], int(x.split('@')[1])) for x in t[3:]]
    return ev

def calls(ev):
    by = collections.defaultdict(dict)
    for (r, c), e in ev.items():
        by[c][r] = e
    return {c: d for c, d in by.items() if len(d) == 8}

def deciles(v):
    return [round(x) for x in st.quantiles(v, n=10)]

def show(ev, which):
    cs = calls(ev)
    for c in which:
        d = cs[c]
        t0 = min(e[0][1] for e in d.values())
        print('call', c, 'span %.0f us' % ((max(e[-1][1] for e in d.values()) - t0) / 1e3))
        for r in sorted(d):
            print(' r%d' % r, ' '.join('%s:%.0f' % (k, (ts - t0) / 1e3) for k, ts in d[r]))

def hops(ev):
    d = collections.defaultdict(list)
    for c, rs in calls(ev).items():
        if c < 5:
            continue
        sends, takes = collections.defaultdict(list), collections.defaultdict(list)
        for r, e in rs.items():
            rw = [ts for k, ts in e if k.startswith('rw')][0]
            for k, ts in e:
                if k[0] == 's':
                    sends[(r, int(k[2:]))].append((ts, k[1], 'post' if ts > rw else 'pre'))
                elif k[0] == 'r':
                    takes[(int(k[2:]), r)].append(ts)
        for key, ss in sends.items():
            for (ts, l, ph), tr in zip(ss, takes.get(key, [])):
                d[(ph, l)].append((tr - ts) / 1e3)
    for k in sorted(d):
        if len(d[k]) > 10:
            print(k, len(d[k]), 'median %.0f us' % st.median(d[k]), 'deciles', deciles(d[k]))

def first(e, k):
    return next(ts for kk, ts in e if kk == k)

def chain(ev):
    res = collections.defaultdict(list)
    site = ([0, 1, 2, 3], [4, 5, 6, 7])
    for c, d in calls(ev).items():
        for a, b, sa, sb in ((0, 4, *site), (4, 0, *site[::-1]), (1, 5, *site), (5, 1, *site[::-1])):
            B, Blast = min(d[r][0][1] for r in sa), max(d[r][0][1] for r in sa)
            sw, rw = first(d[a], 'sw%d' % b), first(d[b], 'rw%d' % a)
            E = max(d[r][-1][1] for r in sb)
            res['skew (last begin - first)'].append((Blast - B) / 1e3)
            res['pre (last begin -> WAN send)'].append((sw - Blast) / 1e3)
            res['wan (send -> take)'].append((rw - sw) / 1e3)
            res['post (WAN take -> last end)'].append((E - rw) / 1e3)
    for k, v in res.items():
        print('%-30s median %6.0f us  deciles %s' % (k, st.median(v), deciles(v)))

def crit(ev, lo, hi):
    def sender(r, c, i):  # the send that take i of rank r in call c took
        k = ev[(r, c)][i][0]
        lvl, p = k[1], int(k[2:])
        n = sum(1 for kk, _ in ev[(r, c)][:i] if kk == k)
        js = [j for j, (kk, _) in enumerate(ev[(p, c)]) if kk == 's' + lvl + str(r)]
        return (p, c, js[n]) if n < len(js) else None
    tot, cnt = collections.Counter(), collections.Counter()
    r = max(range(8), key=lambda x: ev[(x, hi)][-1][1])
    c, i = hi, len(ev[(r, hi)]) - 1
    while c >= lo:
        k, ts = ev[(r, c)][i]
        if k == 'B':
            if c == lo:
                break
            prev = ev[(r, c - 1)]
            tot['gap between calls'] += ts - prev[-1][1]
            c, i = c - 1, len(prev) - 1
            continue
        pk, pts = ev[(r, c)][i - 1]
        if k[0] == 'r':
            m = sender(r, c, i)
            if m is not None and ev[m[:2]][m[2]][1] >= pts:  # it came after this rank's step before: the hop binds
                tot['hop ' + k[1]] += ts - ev[m[:2]][m[2]][1]
                cnt['hop ' + k[1]] += 1
                r, c, i = m
                continue
        tot['own step'] += ts - pts
        i -= 1
    n, s = hi - lo, sum(tot.values())
    print('calls %d..%d' % (lo, hi))
    for k, v in tot.most_common():
        extra = ', %.2f a call, %.0f us each' % (cnt[k] / n, v / 1e3 / cnt[k]) if cnt[k] else ''
        print('%-18s %6.0f us a call (%4.1f %%%s)' % (k, v / 1e3 / n, 100 * v / s, extra))
    print('total %.0f us a call' % (s / 1e3 / n))

def gaps(ev):
    g, dur = [], []
    for (r, c), e in ev.items():
        dur.append((e[-1][1] - e[0][1]) / 1e3)
        if (r, c + 1) in ev:
            g.append((ev[(r, c + 1)][0][1] - e[-1][1]) / 1e3)
    print('end -> next begin, us: median %.0f deciles %s' % (st.median(g), deciles(g)))
    print('begin -> end, us: deciles %s' % deciles(dur))

if __name__ == '__main__':
    cmd, ev = sys.argv[1], load(sys.argv[2])
    if cmd == 'show':
        show(ev, [int(x) for x in sys.argv[3].split(',')])
    elif cmd == 'crit':
        crit(ev, int(sys.argv[3]), int(sys.argv[4]))
    else:
        {'hops': hops, 'chain': chain, 'gaps': gaps}[cmd](ev)
