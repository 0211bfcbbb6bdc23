#!/usr/bin/env python3
# conns.py RAWDIR SAMPDIR [SIZE]: per timed call, each WAN owner connection's
# sending through the call from the send sampler (GOCOLL_MR_SAMPLES): first
# and last ms its sent bytes grew (from the call's start), the bytes it sent,
# its share of sent at the call's WAN midpoint, the ms it had data unsent
# and what held it (limit), and, after the first connection of the direction
# ended, how its rate rose (bytes/ms in the 5 ms before that end and in each
# 4 ms after).
import sys, re, datetime, glob, collections
raw, sd = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 16777216
calls = {}
for line in open(glob.glob(raw + '/out')[0], errors='replace'):
    m = re.match(r'\[rank (\d+)\] time=(\S+) .*msg="gocoll: coll" .*seq=(\d+) op=(\w+) .* bytes=(\d+) took=([0-9.]+)(ms|s)$', line.rstrip())
    if not m or m.group(4) != 'AllReduce' or int(m.group(5)) != size: continue
    e = datetime.datetime.fromisoformat(m.group(2).replace('Z', '+00:00')).timestamp()
    t = float(m.group(6)) / (1000 if m.group(7) == 'ms' else 1)
    lo, hi = calls.get(int(m.group(3)), (1e20, 0)); calls[int(m.group(3))] = (min(lo, e - t), max(hi, e))
limits = ["idle", "handshake", "msgwindow", "credit", "drain", "rate", "paths", "window", "pace", "ready"]
S = collections.defaultdict(list)  # (rank, peer) -> [(t_unix, sent, unsent, limit, cwnd, inflight)]
for f in glob.glob(sd + '/*'):
    start = 0
    for line in open(f):
        if line.startswith('# start_unixns'): start = int(line.split()[2]); continue
        if line.startswith('#'): continue
        v = line.split()
        r, at, peer = int(v[0]), int(v[1]), int(v[2])
        if (r < 4) == (peer < 4): continue  # site-local
        S[(r, peer)].append((start / 1e9 + at / 1e6, int(v[14]), int(v[4]), v[3], int(v[7]), int(v[6])))
def at(ss, t):  # sent at time t (last sample <= t)
    x = 0
    for s in ss:
        if s[0] > t: break
        x = s[1]
    return x
for seq in sorted(calls)[1:]:
    lo, hi = calls[seq]
    print('call %d (%.0f ms)' % (seq, (hi - lo) * 1e3))
    for d, name in ((0, 'site1->2'), (1, 'site2->1')):
        rows = []
        for (r, p), ss in sorted(S.items()):
            if (r >= 4) != d: continue
            w = [s for s in ss if lo - 0.002 <= s[0] <= hi + 0.002]
            if not w: continue
            base = at(ss, lo - 0.002)
            grow = [s for i, s in enumerate(w) if s[1] > (w[i - 1][1] if i else base)]
            if not grow or w[-1][1] - base < 1e6: continue
            first, last = grow[0][0], grow[-1][0]
            lim = collections.Counter(s[3] for s in w if s[2] > 0)
            top = max(s[1] + s[2] for s in w)
            posted = next(s[0] for s in w if s[1] + s[2] >= top - 65536)
            rows.append([r, p, first, last, w[-1][1] - base, ss, base, lim, sum(1 for s in w if s[2] > 0), posted])
        if not rows: continue
        mid = (min(x[2] for x in rows) + max(x[3] for x in rows)) / 2
        e1 = min(x[3] for x in rows)
        print('  %s: first end %.0f ms, spread %.0f ms' % (name, (e1 - lo) * 1e3, (max(x[3] for x in rows) - e1) * 1e3))
        last = max(rows, key=lambda x: x[3])
        def st(ss, t):
            x = None
            for q in ss:
                if q[0] > t: break
                x = q
            return x
        q = st(last[5], e1)
        if q and last[3] > e1:
            print('    last %d->%d: at first end unsent %.0f kB inflight %.0f kB, sent %.0f kB more in %.1f ms: %.0f kB/ms' % (last[0], last[1], q[2]/1e3, q[5]/1e3, (last[4]+last[6]-q[1])/1e3, (last[3]-e1)*1e3, (last[4]+last[6]-q[1])/1e3/max((last[3]-e1)*1e3,0.1)))
        if '-v' in sys.argv and q and last[3] > e1:
            for f in glob.glob(sd + '/*.%d' % last[0]):
                st0 = [l for l in open(f) if l.startswith('# start')][0].split()[2]
                for l in open(f):
                    v = l.split()
                    if l[0] != '#' and int(v[2]) == last[1]:
                        t = int(st0) / 1e9 + int(v[1]) / 1e6
                        if e1 - 0.01 <= t <= last[3]:
                            print('      %6.1f ms limit %-6s unsent %5d kB inflight %4d kB cwnd %4d kB pacerate %5.1f MB/s srtt %5.1f fab %5.1f lag %4.1f' % ((t - lo) * 1e3, v[3], int(v[4]) // 1000, int(v[6]) // 1000, int(v[7]) // 1000, float(v[10]) / 1e6, int(v[19]) / 1e3, int(v[20]) / 1e3, int(v[15]) / 1e3))
        tot_mid = sum(at(x[5], mid) - x[6] for x in rows)
        for r, p, first, last, sent, ss, base, lim, nun, posted in sorted(rows, key=lambda x: x[3]):
            m = at(ss, mid) - base
            pre = (at(ss, e1) - at(ss, e1 - 0.005)) / 5e3
            post = ' '.join('%.0f' % ((at(ss, e1 + 0.004 * (k + 1)) - at(ss, e1 + 0.004 * k)) / 4e3) for k in range(6))
            print('    %d->%d start %5.1f posted %5.1f end %5.1f sent %5.2f MB midshare %4.1f%% unsent-ms %3d limits %s | kB/ms pre %.0f post %s' % (
                r, p, (first - lo) * 1e3, (posted - lo) * 1e3, (last - lo) * 1e3, sent / 1e6, 100 * m / max(tot_mid, 1), nun,
                ' '.join('%s:%d' % kv for kv in lim.most_common(4)), pre, post))
