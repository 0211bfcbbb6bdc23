#!/usr/bin/env python3
"""classify.py SAMPLES_PREFIX RAWDIR [BIN_MS]
   classify.py --sim TESTLOG SAMPLES_PREFIX.SEED [BIN_MS]
what held the WAN connections'
posted data, by time into each call (session 26, post26, issue 14).

SAMPLES_PREFIX: the GOCOLL_MR_SAMPLES value of a bench/wan_trace.sh run (files
PREFIX.0 .. PREFIX.7, mrtransport's send sampler); RAWDIR: that run's raw
directory (its out: each rank's GOCOLL_DEBUG_SUBSYS=COLL lines give the calls).
Ranks 0-3 are site 1, 4-7 site 2 (hier_lab's hostfile): a WAN connection joins
ranks of different sites. For every sample of a WAN connection with posted
bytes not yet sent once (unsent > 0), it counts the connection-ms by limit
(metaroce.SendLimit) in BIN_MS (default 10) ms bins of call time, for the
16 MiB calls (a call: the first rank's start to the last rank's end), and
the sampler's lag and the engine timer's overdue time per bin.
With --sim, the files of TestWANSimHierarchical's WAN_SIM_SAMPLES (virtual
time) and the test's -v log (each call's start, WAN_SIM_SAMPLES's lines; a
call ends where the next starts, the last at its last sample).
"""
import collections, datetime, glob, os, re, statistics, sys

sim = sys.argv[1] == "--sim"
if sim:
    sys.argv.pop(1)
    raw, prefix = sys.argv[1], sys.argv[2]
else:
    prefix, raw = sys.argv[1], sys.argv[2]
binms = int(sys.argv[3]) if len(sys.argv) > 3 else 10
size = "16777216"
rate = float(os.environ.get("RATE", "200")) * 1e6 / 8  # each WAN link's bytes/s

calls = collections.defaultdict(lambda: [1e30, 0.0])  # seq -> [start, end] unix s
seed = prefix.rsplit(".", 1)[-1]
for line in (open(raw) if sim else []):
    m = re.search(r"seed (\d+) call (\d+) starts at (\d+) ", line)
    if m and m.group(1) == seed:
        calls[int(m.group(2))] = [int(m.group(3)) / 1e9, 1e30]
for k in sorted(calls):
    if k + 1 in calls:
        calls[k][1] = calls[k + 1][0]
pat = re.compile(r'^\[rank (\d+)\] time=(\S+) .*msg="gocoll: coll" .*seq=(\d+) op=AllReduce .*bytes=(\d+) took=([0-9.]+)(ms|s|µs)$')
for line in (open(raw + "/out") if not sim else []):
    m = pat.match(line.strip())
    if not m or m.group(4) != size:
        continue
    end = datetime.datetime.fromisoformat(m.group(2).replace("Z", "+00:00")).timestamp()
    took = float(m.group(5)) * {"ms": 1e-3, "s": 1.0, "µs": 1e-6}[m.group(6)]
    c = calls[int(m.group(3))]
    c[0], c[1] = min(c[0], end - took), max(c[1], end)
order = sorted(calls)

rows, sentrows = [], []
for f in sorted(glob.glob(prefix + ".*")):
    start = 0
    for line in open(f):
        if line.startswith("# start_unixns"):
            start = int(line.split()[2]) / 1e9
            continue
        if line.startswith("#"):
            continue
        x = line.split()
        rank, at, peer = int(x[0]), int(x[1]), int(x[2])
        if rank // 4 == peer // 4:
            continue
        sentrows.append((start + at / 1e6, rank, peer, int(x[14])))
        if int(x[4]) == 0:
            continue
        lim = x[3]
        if len(x) < 18:  # the first format: timerlate_us, no armed
            late = int(x[16])
        else:
            timer, armed = int(x[16]), x[17] == "1"
            late = max(-timer, 0) if armed else 0
        if lim == "ready" and len(x) >= 18:  # the engine's timer: overdue (or due now), set for later, or not set
            lim = "ready-due" if armed and timer <= 0 else "ready-later" if armed else "ready-none"
        rows.append((start + at / 1e6, rank, peer, lim, int(x[4]), int(x[6]), int(x[7]), int(x[15]), late, int(x[8]), float(x[10]), int(x[18]) if len(x) > 18 else -1,
                     (int(x[19]), int(x[20])) if len(x) > 20 else None))

sentrows.sort()
lastsent = {}
limits = ["credit", "msgwindow", "handshake", "drain", "rate", "paths", "window", "pace", "ready", "ready-due", "ready-later", "ready-none"]
tot = collections.Counter()
for seq in order:
    s, e = calls[seq]
    by = collections.defaultdict(collections.Counter)
    lag = collections.defaultdict(list)
    tl = collections.defaultdict(list)
    win = collections.defaultdict(list)
    for t, rank, peer, lim, unsent, infl, cwnd, lg, late, ss, pr, unw, rtt in rows:
        if s <= t < e:
            b = int((t - s) * 1000 // binms)
            by[b][lim] += 1
            lag[b].append(lg)
            tl[b].append(late)
            if lim == "window":
                win[b].append((cwnd, infl, ss, unsent))
            tot[lim] += 1
    sentb = collections.Counter()
    for t, rank, peer, sent in sentrows:
        if s <= t < e and (rank, peer) in lastsent:
            sentb[int((t - s) * 1000 // binms), 1 if rank >= 4 else 2] += sent - lastsent[rank, peer]
        lastsent[rank, peer] = sent
    print(f"# call seq {seq}: {1000 * (e - s):.1f} ms; WAN conn-ms with unsent > 0 by limit, per {binms} ms; lag and timer-late medians/p90 (us)")
    print("  ms " + " ".join(f"{l:>9}" for l in limits) + "   lag50  lag90  tl50  tl90 sent%1 sent%2 | window samples' median cwnd, inflight, unsent (kB), slow-start paths")
    for b in sorted(by):
        c = by[b]
        lg, t2 = sorted(lag[b]), sorted(tl[b])
        q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
        print(f"{b * binms:4d} " + " ".join(f"{c[l]:9d}" for l in limits) +
              f" {q(lg, .5):6d} {q(lg, .9):6d} {q(t2, .5):5d} {q(t2, .9):5d}" +
              "".join(f" {100 * sentb[b, d] / (4 * rate * binms / 1000):6.0f}" for d in (1, 2)), end="")
        w = win[b]
        if w:
            med = lambda i: statistics.median(v[i] for v in w)
            print(f"  | {med(0) / 1e3:6.0f} {med(1) / 1e3:6.0f} {med(3) / 1e3:6.0f} {med(2):4.1f}", end="")
        print()
# The sampler's own silences: between two samples of a rank's WAN
# connection, both with unsent bytes, more than 1.5 ms apart, the rank's
# sampler goroutine did not run (ticks are dropped, not queued): the
# process or its goroutine was not scheduled. Reported as a share of the
# busy time, over all calls.
unsampled = sampled = 0.0
byrank = collections.defaultdict(list)
for r in rows:
    byrank[r[1], r[2]].append(r[0])
for k, ts in byrank.items():
    ts.sort()
    for a, b in zip(ts, ts[1:]):
        d = (b - a) * 1000
        if d > 10:
            continue  # the connection went idle between (not a silence)
        sampled += 1
        if d > 1.5:
            unsampled += d - 1
print(f"# the sampler's silences within busy stretches (gaps of 1.5-10 ms between samples with unsent bytes): "
      f"{100 * unsampled / max(unsampled + sampled, 1):.0f} % of the busy time unsampled")
ph = collections.defaultdict(collections.Counter)
for seq in order[1:]:
    s0, e0 = calls[seq]
    for r in rows:
        if s0 <= r[0] < e0:
            ph["early" if (r[0] - s0) * 1000 < float(os.environ.get("EARLY", "60")) else "later"][r[3]] += 1
for k in sorted(ph):
    m = sum(ph[k].values())
    print(f"# {k} (calls but the first): " + ", ".join(f"{l} {100 * ph[k][l] / m:.0f} %" for l in limits if ph[k][l]) + f" of {m} conn-ms")
n = sum(tot.values())
print("# all calls: " + ", ".join(f"{l} {tot[l]} ({100 * tot[l] / max(n, 1):.0f} %)" for l in limits))

# Beside the links: the delay daemons' trace (RAWDIR/trace.gz), each WAN
# queue replayed as a FIFO at RATE Mbit/s (as bench/wan_split.sh does): the
# share of each 1 ms a direction's 4 links were busy. Queues 257-260 carry
# site 2's ranks (4-7) to site 1, 513-516 ranks 0-3 to site 2 (mid25). Each
# sample of a sending rank's WAN connection with unsent bytes is counted
# under its direction's busy share at that ms: idle (< 85 %) or full, early
# (the call's first EARLY ms) or later, for the timed calls (all but the
# first, the warm-up).
import gzip, os
if sim:
    sys.exit(0)
early_ms = float(os.environ.get("EARLY", "60"))
# A datagram sent at t reaches the rate limiter after the delay daemon's
# one-way delay: the sample at t is set against the links at t + SHIFT_MS.
shift_ms = int(os.environ.get("SHIFT_MS", "2"))
busy = collections.defaultdict(float)  # (dir, ms since epoch) -> busy seconds summed over 4 links
free = {}
start = 0
tr = []
with gzip.open(raw + "/trace.gz", "rt") as f:
    for line in f:
        if line.startswith("# start"):
            start = int(line.split()[2]) / 1e9
            continue
        if line.startswith("#"):
            continue
        x = line.split()
        q, n, rel = int(x[0]), int(x[1]), int(x[5]) / 1e9
        s0 = max(start + rel, free.get(q, 0))
        e0 = s0 + (n + 14) / rate
        free[q] = e0
        d = 1 if q < 512 else 2
        t = s0
        while t < e0:
            ms = int(t * 1000)
            nxt = min(e0, (ms + 1) / 1000)
            busy[d, ms] += nxt - t
            t = nxt
timed = order[1:]
tab = collections.defaultdict(collections.Counter)
idlew = collections.defaultdict(float)
lagsum = collections.defaultdict(list)
wins = collections.defaultdict(list)
rtts = collections.defaultdict(list)
rttpair = collections.defaultdict(list)
for seq in timed:
    s, e = calls[seq]
    for t, rank, peer, lim, unsent, infl, cwnd, lg, late, ss, pr, unw, rtt in rows:
        if not s <= t < e:
            continue
        d = 1 if rank >= 4 else 2
        b = busy.get((d, int(t * 1000 + shift_ms)), 0.0) / 4 / 1e-3
        phase = "early" if (t - s) * 1000 < early_ms else "later"
        state = "idle" if b < 0.85 else "full"
        tab[phase, state][lim] += 1
        if lim in ("window", "pace") and pr > 0:
            # the windows' RTT: pacing is 1.25 cwnd/srtt summed over the paths (2 in slow start)
            rtts[phase, state].append(1.25 * cwnd / pr * 1000)
        if lim == "window":
            wins[phase, state].append((cwnd, infl, unw))
        if rtt and lim in ("window", "pace"):
            rttpair[phase, state].append(rtt)
        if state == "idle":
            idlew[phase, lim] += 1 - b
            lagsum[phase].append(lg)
print(f"# timed calls {timed}: samples of WAN connections with unsent > 0, by their direction's links in that ms (idle: < 85 % busy), {shift_ms} ms later (SHIFT_MS)")
print("  phase  links " + " ".join(f"{l:>9}" for l in limits))
for k in sorted(tab):
    print(f"  {k[0]:6} {k[1]:5} " + " ".join(f"{tab[k][l]:9d}" for l in limits))
for k in sorted(wins):
    w = wins[k]
    print(f"# window-held samples, {k[0]} {k[1]}: cwnd median {statistics.median(v[0] for v in w) / 1e3:.0f} kB "
          f"(p10 {sorted(v[0] for v in w)[len(w) // 10] / 1e3:.0f}), in flight median {statistics.median(v[1] for v in w) / 1e3:.0f} kB"
          + (f"; the rank's datagrams polled and not written: median {statistics.median(v[2] for v in w):.0f}, "
             f"p90 {sorted(v[2] for v in w)[9 * len(w) // 10]}" if w[0][2] >= 0 else ""))
for k in sorted(rtts):
    v = sorted(rtts[k])
    print(f"# window- or pace-held samples, {k[0]} {k[1]}: the windows' RTT (1.25 cwnd / pace rate) median {v[len(v) // 2]:.1f} ms, p10 {v[len(v) // 10]:.1f}, p90 {v[9 * len(v) // 10]:.1f}")
for k in sorted(rttpair):
    v = rttpair[k]
    f = sorted(a for a, b in v)
    g = sorted(b for a, b in v)
    print(f"# window- or pace-held samples, {k[0]} {k[1]}: the paths' smoothed RTT median {f[len(f) // 2] / 1e3:.1f} ms "
          f"(p90 {f[9 * len(f) // 10] / 1e3:.1f}), fabric RTT (no host delays) median {g[len(g) // 2] / 1e3:.1f} ms (p90 {g[9 * len(g) // 10] / 1e3:.1f})")
for ph in ("early", "later"):
    tot_i = sum(v for (p, l), v in idlew.items() if p == ph)
    if tot_i:
        print(f"# {ph}: idle-weighted (sum of 1 - busy over idle-ms samples): " +
              ", ".join(f"{l} {100 * idlew[ph, l] / tot_i:.0f} %" for l in limits if idlew[ph, l]) +
              f"; the sampler's lag in them: median {statistics.median(lagsum[ph])} us")
