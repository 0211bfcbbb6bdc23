#!/usr/bin/env bash
# bench/wan_split.sh: the split of each lab AllReduce call into the parts
# bench/results/wan_gap.md uses for virtual time (before the first WAN
# byte, ramp, middle, tail, after), from a bench/wan_trace.sh run's raw
# directory (its out, the ranks' log, and trace.gz, the delay daemons'
# per-packet trace).
#
# Usage: bench/wan_split.sh RAWDIR
#   env: SIZE (bytes, default 16777216), RATE (each WAN path's Mbit/s,
#        default 200), BIN_MS (default 2), ITERS (timed calls per
#        measurement, default 3: a run of ITERS calls of SIZE between two
#        barriers is timed, other calls are warm-up or checks), SETTLE_MS
#        (default 20, see settle)
#
# A call lasts from the first rank's start to the last rank's end (each
# rank's GOCOLL_DEBUG_SUBSYS=COLL line: its end, ms resolution, and took).
# The trace gives each packet's release into its path's rate limiter; the
# limiter (tbf) is replayed as a FIFO at RATE (IP length + 14 bytes a
# packet), so a link is busy from a packet's start of service to its end.
# Per direction (the 4 queues below 512, then those above), in ms:
#   before: call start -> the first data packet (over 1000 bytes) released;
#   start:  idle link time (averaged over the 4 links) from the call's
#           start to the first BIN_MS bin with the 4 links >= 85 % busy (its
#           length in brackets): before and the ramp together, as a data
#           packet of the call before can come first;
#   middle: idle link time from there to the last such bin;
#   tail:   idle link time after it, to the last data packet's end of
#           service (its length in brackets);
#   after:  that end -> the call's end (negative: a rank's log is late);
#   rate:   the data packets' bytes at the 4 links' rate;
#   late:   packets the daemon released over 1 ms after due, and the worst;
#   settle: the part of middle before the links settle: idle link time
#           from the first full bin to the first of SETTLE_MS (default 20)
#           of bins all full (its length in brackets; the whole middle if
#           no such run). A first piece that fills the links for a few ms
#           and leaves them idle until the next pieces come counts in the
#           middle; settle tells that ramp from gaps in the steady state.
# With RAWDIR/sched (bench/schedsample's samples, wan_trace.sh's SCHED=1),
# a second line per call and direction gives, for its start, middle and
# tail, the cores the job's processes ran on and how many of their
# threads waited for a core on average, and the cores the delay daemons
# ran on (job run/waiting, daemons run).
# The parts of the calls that overlap (a rank starts the next call while
# another ends this one) are counted in both. The last lines are the
# timed calls' means.
set -euo pipefail
D=${1:?usage: bench/wan_split.sh RAWDIR}
SIZE=${SIZE:-16777216}
RATE=${RATE:-200}
BIN_MS=${BIN_MS:-2}
ITERS=${ITERS:-3}
SETTLE_MS=${SETTLE_MS:-20}
[[ $SETTLE_MS =~ ^[0-9]+$ && $SETTLE_MS -gt 0 ]] || { echo "bench/wan_split.sh: SETTLE_MS=$SETTLE_MS: want a whole number of ms above 0" >&2; exit 2; }
[[ -f $D/out && -f $D/trace.gz ]] || { echo "bench/wan_split.sh: $D has no out and trace.gz" >&2; exit 2; }

# Every rank's collective lines: seq op bytes end(unix s) took(ms); then
# per AllReduce of SIZE: seq, end, length (ms), timed (0/1).
calls=$(sed -n 's/^\[rank [0-9]*\] time=\([^ ]*\) .*msg="gocoll: coll" .*seq=\([0-9]*\) op=\([A-Za-z]*\) .* bytes=\([0-9]*\) took=\([0-9.]*\)\(ms\|s\)$/\1 \2 \3 \4 \5 \6/p' "$D/out" |
  while read -r e seq op b t u; do echo "$seq $op $b $(date -d "$e" +%s.%N) $t $u"; done |
  awk -v size="$SIZE" -v iters="$ITERS" '
    { t = ($6 == "s" ? $5 * 1000 : $5); e = $4; b = e - t / 1000; op[$1] = $2 " " $3
      if (!($1 in lo) || b < lo[$1]) lo[$1] = b; if (!($1 in hi) || e > hi[$1]) hi[$1] = e; if ($1 > n) n = $1 }
    END {
      for (s = 0; s <= n; s++) {
        if (op[s] != "AllReduce " size) continue
        r = 0; for (k = s; op[k] == "AllReduce " size; k--) r++
        f = 0; for (k = s; op[k] == "AllReduce " size; k++) f++
        timed = (op[s - r] ~ /^Barrier/ && op[s + f] ~ /^Barrier/ && r + f - 1 == iters)
        printf "%d %.6f %.6f %d\n", s, lo[s], hi[s], timed
      }
    }')
[[ -n $calls ]] || { echo "bench/wan_split.sh: no AllReduce of $SIZE B in $D/out" >&2; exit 1; }

sched=/dev/null
[[ -f $D/sched ]] && sched=$D/sched
zcat "$D/trace.gz" | awk -v rate="$RATE" -v bin="$BIN_MS" -v settle="$SETTLE_MS" -v calls="$calls" -v sched="$sched" '
  BEGIN { nc = split(calls, l, "\n"); for (c = 1; c <= nc; c++) { split(l[c], f, " "); cs[c] = f[1]; lo[c] = f[2]; hi[c] = f[3]; timed[c] = f[4] }
    bps = rate * 1e6 / 8; w = bin / 1000; nset = int((settle + bin - 1) / bin)
    while ((getline x < sched) > 0) { split(x, f, " "); ns++; ST[ns] = f[1] / 1e9; SG[ns] = f[2]; SR[ns] = f[3] / 1e9; SW[ns] = f[4] / 1e9
      SD[ns] = (f[2] in prev ? ST[ns] - prev[f[2]] : 0); prev[f[2]] = ST[ns] } }
  /^# start/ { start = $3 / 1e9; next } /^#/ { next }
  { q = $1; rel = start + $6 / 1e9; s = (rel > free[q] ? rel : free[q]); free[q] = s + ($2 + 14) / bps
    n++; Q[n] = int(q / 256); S[n] = s; E[n] = free[q]; L[n] = $2; LATE[n] = ($6 - $5) / 1e6 }
  END {
    for (c = 1; c <= nc; c++) for (dir = 1; dir <= 2; dir++) split1(c, dir)
    if (nt == 0) { print "# no timed call"; exit }
    for (dir = 1; dir <= 2; dir++)
      printf "mean of %d timed calls, dir %d: call %.1f | before %.1f | start %.1f [%.1f] | middle %.1f | tail %.1f [%.1f] | after %.1f | rate %.1f | settle %.1f [%.1f]\n",
        nt / 2, dir, m["call"] * 2 / nt, m[dir, "before"] * 2 / nt, m[dir, "ramp"] * 2 / nt, m[dir, "rampLen"] * 2 / nt, m[dir, "mid"] * 2 / nt,
        m[dir, "tail"] * 2 / nt, m[dir, "tailLen"] * 2 / nt, m[dir, "after"] * 2 / nt, m[dir, "rate"] * 2 / nt, m[dir, "settle"] * 2 / nt, m[dir, "settleLen"] * 2 / nt
    if (ns > 0) for (dir = 1; dir <= 2; dir++)
      printf "mean of %d timed calls, dir %d cpu (job run/waiting, daemons run): start %.2f/%.1f %.2f | middle %.2f/%.1f %.2f | tail %.2f/%.1f %.2f\n", nt / 2, dir,
        mc[dir, "start", "job"] * 2 / nt, mc[dir, "start", "wait"] * 2 / nt, mc[dir, "start", "daemons"] * 2 / nt, mc[dir, "middle", "job"] * 2 / nt, mc[dir, "middle", "wait"] * 2 / nt,
        mc[dir, "middle", "daemons"] * 2 / nt, mc[dir, "tail", "job"] * 2 / nt, mc[dir, "tail", "wait"] * 2 / nt, mc[dir, "tail", "daemons"] * 2 / nt
  }
  function split1(c, dir,    i, a, b, k, x, first, last, bytes, late, maxl, k0, k1, re, ts, u, idle, len, r, mi, t, st, se, j, ok) {
    delete busy; first = 1e18; last = 0; bytes = 0; late = 0; maxl = 0
    for (i = 1; i <= n; i++) {
      if (Q[i] != dir || S[i] < lo[c] || S[i] > hi[c] + 0.005) continue
      if (L[i] > 1000) { if (S[i] < first) first = S[i]; if (E[i] > last) last = E[i]; bytes += L[i] }
      if (LATE[i] > 1) late++; if (LATE[i] > maxl) maxl = LATE[i]
      a = S[i]; b = E[i]; k = int((a - lo[c]) / w)
      while (a < b) { x = lo[c] + (k + 1) * w; if (x > b) x = b; if (x > a) busy[k] += x - a; a = x; k++ }
    }
    if (last == 0) { printf "seq %d dir %d: no data\n", cs[c], dir; return }
    k0 = 0; k1 = int((last - lo[c]) / w); re = -1; ts = -1
    for (k = k0; k <= k1; k++) if (busy[k] / (4 * w) >= 0.85) { if (re < 0) re = k; ts = k + 1 }
    if (re < 0) { re = k1 + 1; ts = k1 + 1 }
    st = ts # the first bin of nset full ones, within the middle
    for (k = re; k < ts; k++) { ok = 1; for (j = k; j < k + nset; j++) if (j >= ts || busy[j] / (4 * w) < 0.85) { ok = 0; break }; if (ok) { st = k; break } }
    r = 0; mi = 0; t = 0; se = 0
    for (k = k0; k <= k1; k++) {
      len = w; if (k == k1) len = last - (lo[c] + k * w)
      idle = len - busy[k] / 4; if (idle < 0) idle = 0
      if (k < re) r += idle; else if (k >= ts) t += idle; else mi += idle
      if (k >= re && k < st) se += idle
    }
    v["call"] = (hi[c] - lo[c]) * 1000; v["before"] = (first - lo[c]) * 1000; v["ramp"] = r * 1000
    v["rampLen"] = re * w * 1000
    v["mid"] = mi * 1000; v["tail"] = t * 1000; v["tailLen"] = (last - (lo[c] + ts * w)) * 1000; if (v["tailLen"] < 0) v["tailLen"] = 0
    v["after"] = (hi[c] - last) * 1000; v["rate"] = bytes / (4 * bps) * 1000
    v["settle"] = se * 1000; v["settleLen"] = (st - re) * w * 1000
    printf "seq %d%s dir %d: call %.1f | before %.1f | start %.1f [%.1f] | middle %.1f | tail %.1f [%.1f] | after %.1f | rate %.1f | late %d, max %.1f | settle %.1f [%.1f]\n",
      cs[c], (timed[c] ? " (timed)" : ""), dir, v["call"], v["before"], v["ramp"], v["rampLen"], v["mid"], v["tail"], v["tailLen"], v["after"], v["rate"], late, maxl, v["settle"], v["settleLen"]
    if (timed[c]) { nt++; if (dir == 1) m["call"] += v["call"]; for (x in v) if (x != "call") m[dir, x] += v[x] }
    if (ns == 0) return
    cpu(lo[c], lo[c] + re * w, "start"); cpu(lo[c] + re * w, lo[c] + ts * w, "middle"); cpu(lo[c] + ts * w, last, "tail")
    printf "seq %d%s dir %d cpu (job run/waiting, daemons run): start %.2f/%.1f %.2f | middle %.2f/%.1f %.2f | tail %.2f/%.1f %.2f\n", cs[c], (timed[c] ? " (timed)" : ""), dir,
      C["start", "job"], C["start", "wait"], C["start", "daemons"], C["middle", "job"], C["middle", "wait"], C["middle", "daemons"], C["tail", "job"], C["tail", "wait"], C["tail", "daemons"]
    if (timed[c]) for (x in C) mc[dir, x] += C[x]
  }
  # cpu sets C[part, "job"|"wait"|"daemons"]: the run and wait of a
  # group of samples taken in (a, b] over the time they cover (a sample
  # covers the time since the sample of its group before it, longer than
  # -every where the sampler ran late; the first sample of a group is left out).
  function cpu(a, b, part,    i, r, q, d, sj, sd) {
    r = 0; q = 0; d = 0; sj = 0; sd = 0
    for (i = 1; i <= ns; i++) { if (ST[i] <= a || ST[i] > b || SD[i] <= 0) continue
      if (SG[i] == "job") { r += SR[i]; q += SW[i]; sj += SD[i] } else if (SG[i] == "daemons") { d += SR[i]; sd += SD[i] } }
    C[part, "job"] = (sj > 0 ? r / sj : 0); C[part, "wait"] = (sj > 0 ? q / sj : 0); C[part, "daemons"] = (sd > 0 ? d / sd : 0)
  }'
