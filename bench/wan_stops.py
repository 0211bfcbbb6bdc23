#!/usr/bin/env python3
"""bench/wan_stops.py: what the two cores ran while every WAN path stopped.

Usage: bench/wan_stops.py RAWDIR [MIN_MS]

RAWDIR is a bench/wan_trace.sh run's raw directory made with PERF=1 or
PERF=3 (perf.data: every context switch and wake-up of the machine; clocks;
pids, the lab namespaces' pids; out; trace.gz, the delay daemons' per-packet
trace). SIZE (env, bytes, default 16777216) picks the AllReduce calls.

A stop is an interval of at least MIN_MS (default 1) within a call, between
its first and last WAN data packet (over 1000 bytes), in which no data
packet arrived at any WAN queue, in either direction: the kernel's receive
stamp at the sending site's router, which the daemons trace, so a stop is
the senders' (the daemons' own lateness is wan_split.sh's "late"). Per call
(the first, warm-up, call left out of the sums) it prints the stops' total
and, for the stops and for the rest of the WAN phase apart, the cores' time
by what ran (ms of the 2 cores): job (the lab's ranks), delayd (the lab's
delay daemons), ksoftirqd, idle, kernel (other kernel threads), other
(every other process: other work on the machine), and the share of the
time some ksoftirqd (which runs the softirq work, and so the lab's emulated
links and bridges, that the interrupted context did not finish) waited for
a core. With -v each stop is listed with its five largest.
"""
import collections
import datetime
import gzip
import os
import re
import subprocess
import sys

COLL = re.compile(r'\[rank (\d+)\] time=(\S+) .*msg="gocoll: coll" .*seq=(\d+) op=(\w+) .* bytes=(\d+) took=([0-9.]+)(ms|s)$')
EV = re.compile(r'\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([0-9.]+):\s+sched:(\w+):\s+(.*)')
SWITCH = re.compile(r'prev_comm=(.*) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=(\d+)')
WAKE = re.compile(r'comm=(.*) pid=(\d+) prio')


def calls_of(d, size):
    """Each AllReduce of size bytes: seq -> (first start, last end), Unix ns."""
    calls = {}
    with open(os.path.join(d, 'out'), errors='replace') as f:
        for line in f:
            m = COLL.match(line.rstrip('\n'))
            if not m or m.group(4) != 'AllReduce' or int(m.group(5)) != size:
                continue
            end = datetime.datetime.fromisoformat(m.group(2).replace('Z', '+00:00')).timestamp()
            took = float(m.group(6)) / (1000 if m.group(7) == 'ms' else 1)
            lo, hi = calls.get(int(m.group(3)), (float('inf'), 0))
            calls[int(m.group(3))] = (min(lo, end - took), max(hi, end))
    return {s: (int(lo * 1e9), int(hi * 1e9)) for s, (lo, hi) in calls.items()}


def arrivals(d):
    """The data packets' arrival times (Unix ns), sorted."""
    out, start = [], 0
    with gzip.open(os.path.join(d, 'trace.gz'), 'rt') as f:
        for line in f:
            if line.startswith('# start'):
                start = int(line.split()[2])
            elif not line.startswith('#'):
                fields = line.split()
                if int(fields[1]) > 1000:
                    out.append(start + int(fields[3]))
    return sorted(out)


def schedule(d):
    """Per CPU, the tasks' runs (t0, t1, tid, comm, prio), and ksoftirqd's
    waits for a core (wake-up to switch-in), in Unix ns."""
    mono, wall = map(int, open(os.path.join(d, 'clocks')).read().split())
    off = wall - mono
    text = subprocess.run(['perf', 'script', '-i', os.path.join(d, 'perf.data'), '-F', 'pid,tid,cpu,time,event,trace'],
                          capture_output=True, text=True, check=True).stdout
    runs, cur, tgid, woke, waits = collections.defaultdict(list), {}, {}, {}, []
    for line in text.splitlines():
        m = EV.match(line)
        if not m:
            continue
        tgid[int(m.group(2))] = int(m.group(1))
        cpu, t, kind, rest = int(m.group(3)), round(float(m.group(4)) * 1e9) + off, m.group(5), m.group(6)
        if kind == 'sched_wakeup':
            w = WAKE.search(rest)
            if w and w.group(1).startswith('ksoftirqd'):
                woke.setdefault(w.group(1), t)
            continue
        s = SWITCH.search(rest)
        if kind != 'sched_switch' or not s:
            continue
        if cpu in cur:
            runs[cpu].append((cur[cpu][0], t) + cur[cpu][1:])
        cur[cpu] = (t, int(s.group(6)), s.group(5), int(s.group(7)))
        if s.group(5) in woke:
            waits.append((woke.pop(s.group(5)), t))
    return runs, tgid, waits


def main():
    args = [a for a in sys.argv[1:] if a != '-v']
    if not args:
        sys.exit(__doc__.split('\n\n')[1])
    d, min_ns = args[0], float(args[1] if len(args) > 1 else 1) * 1e6
    verbose = '-v' in sys.argv
    job, daemons = set(), set()
    for line in open(os.path.join(d, 'pids')):
        f = line.split()
        (daemons if f and f[0].endswith('r') else job).update(int(p) for p in f[1:])
    calls = calls_of(d, int(os.environ.get('SIZE', 16777216)))
    arr = arrivals(d)
    runs, tgid, waits = schedule(d)

    def who(tid, comm, prio):
        g = tgid.get(tid, tid)
        if tid == 0:
            return 'idle'
        if g in job:
            return 'job'
        if g in daemons:
            return 'delayd'
        if comm.startswith('ksoftirqd'):
            return 'ksoftirqd'
        if tgid.get(tid) == 2 or comm.startswith(('kworker', 'rcu', 'migration', 'kdamond')):
            return 'kernel'
        return 'other'

    def ran(ivs):
        tot = collections.Counter()
        for rs in runs.values():
            for t0, t1, tid, comm, prio in rs:
                for a, b in ivs:
                    if t1 > a and t0 < b:
                        tot[who(tid, comm, prio)] += (min(t1, b) - max(t0, a)) / 1e6
        return tot

    def covered(ivs):
        tot = 0
        for a, b in ivs:
            segs, end = sorted((max(a, x), min(b, y)) for x, y in waits if y > a and x < b), a
            for x, y in segs:
                tot += max(0, y - max(x, end))
                end = max(end, y)
        return tot

    def fmt(c):
        return ', '.join('%s %.1f' % kv for kv in c.most_common())

    sums = collections.Counter()
    for seq in sorted(calls):
        lo, hi = calls[seq]
        a = [x for x in arr if lo <= x <= hi]
        if len(a) < 100:
            continue
        stops = [(x, y) for x, y in zip(a, a[1:]) if y - x >= min_ns]
        rest, prev = [], a[0]
        for x, y in stops:
            rest.append((prev, x))
            prev = y
        rest.append((prev, a[-1]))
        st, rt = sum(y - x for x, y in stops), sum(y - x for x, y in rest)
        cs, cr = ran(stops), ran(rest)
        ks, kr = covered(stops), covered(rest)
        print('call %d: %.1f ms, WAN data %.1f-%.1f ms; %d stops of >= %g ms, %.1f ms' % (
            seq, (hi - lo) / 1e6, (a[0] - lo) / 1e6, (a[-1] - lo) / 1e6, len(stops), min_ns / 1e6, st / 1e6))
        print('  in the stops, cores ran (ms): %s; a ksoftirqd waited %.0f %% of the time' % (fmt(cs), 100 * ks / max(st, 1)))
        print('  the rest of the WAN phase (%.1f ms): %s; a ksoftirqd waited %.0f %%' % (rt / 1e6, fmt(cr), 100 * kr / max(rt, 1)))
        if verbose:
            for x, y in stops:
                print('    stop at %6.1f ms, %5.2f ms: %s' % ((x - lo) / 1e6, (y - x) / 1e6, ', '.join('%s %.2f' % kv for kv in ran([(x, y)]).most_common(5))))
        if seq != min(calls):
            sums.update({'stop': st / 1e6, 'rest': rt / 1e6, 'ks': ks / 1e6, 'kr': kr / 1e6, 'n': 1})
            sums.update({'s.' + k: v for k, v in cs.items()})
            sums.update({'r.' + k: v for k, v in cr.items()})
    if sums['n']:
        n = sums['n']
        share = lambda p, tot: ', '.join('%s %.0f %%' % (k[2:], 100 * v / (2 * tot)) for k, v in sorted(sums.items(), key=lambda kv: -kv[1]) if k.startswith(p))
        print('mean of %d calls after the first: stops %.1f ms a call; cores in the stops: %s; ksoftirqd waiting %.0f %%' % (
            n, sums['stop'] / n, share('s.', sums['stop']), 100 * sums['ks'] / max(sums['stop'], 1e-9)))
        print('  the rest of the WAN phase %.1f ms a call: %s; ksoftirqd waiting %.0f %%' % (
            sums['rest'] / n, share('r.', sums['rest']), 100 * sums['kr'] / max(sums['rest'], 1e-9)))


if __name__ == '__main__':
    main()
