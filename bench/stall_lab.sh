#!/usr/bin/env bash
# bench/stall_lab.sh: bench/hier_lab.sh (issue 14's lab AllReduce) with
# each call's CPU accounted, to tell a slow call whose ranks were starved
# of CPU (a loaded machine: their threads runnable, waiting for a CPU)
# from one that waited on the network or a timer. Needs root, as
# hier_lab.sh.
#
# Usage: bench/stall_lab.sh
#   env: hier_lab.sh's (LAB, RATE, SIZES, ITERS, ALGOS, GOCOLL, XENV...;
#        OUT default bench/results/stall_lab), SLOW (default 2.5: a call is
#        slow when it took more than SLOW times the median of its size in
#        the run)
#
# While hier_lab.sh runs, bench/schedsample reads the ranks' schedstat
# every 100 ms (the ranks are told apart from other jobs' by a variable
# of their environment, STALL_LAB_TAG, which they inherit). For every
# AllReduce of 1 MiB or more but the first (which also waits for the ranks
# to start), by seq, from the first rank's start to the last rank's end
# (the ranks' "gocoll: coll" lines), it prints the
# wall time (the slowest rank's), the CPU the 8 ranks used, that CPU per
# second of wall time, and their threads' summed run-queue wait per
# second of wall time; then the means of the slow calls and of the others,
# by size. A slow call that used its size's usual CPU, got a fraction of
# the others' CPU per second and waited longer in the run queue was
# starved; one that used little CPU and waited little was idle, waiting on
# the transport. OUT/raw keeps hier_lab.sh's files and the samples
# (STAMP.sched: schedsample's lines, unix ns, "job", the 8 ranks' CPU ns
# and run-queue wait ns since the previous sample, threads).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-bench/results/stall_lab}
SLOW=${SLOW:-2.5}
mkdir -p "$OUT/raw"
tmp=$(mktemp -d)
sp=
trap '[[ -n $sp ]] && kill "$sp" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/schedsample" ./bench/schedsample
tag="stall-lab-$$-$(date +%s%N)"
stamp=$(date -u +%Y%m%d-%H%M%S)
touch "$tmp/start"
"$tmp/schedsample" -group "job=env:STALL_LAB_TAG=$tag" -every 100ms -for 24h >"$OUT/raw/$stamp.sched" &
sp=$!
STALL_LAB_TAG=$tag OUT=$OUT bash bench/hier_lab.sh
kill "$sp"
wait "$sp" 2>/dev/null || true
sp=

for raw in $(find "$OUT/raw" -newer "$tmp/start" -name '*.txt' ! -name '*.sim.txt' | sort); do
  echo "== $raw (samples: $OUT/raw/$stamp.sched)"
  TZ=UTC awk -v slow="$SLOW" '
    # The ranks lines: time=2026-12-06T18:03:25.377Z ... seq=N op=AllReduce ... bytes=B took=T
    FNR == NR {
      if ($0 !~ /msg="gocoll: coll"/ || $0 !~ /op=AllReduce/) next
      s = ""; b = 0; t = ""; ts = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^seq=/) s = substr($i, 5)
        if ($i ~ /^bytes=/) b = substr($i, 7) + 0
        if ($i ~ /^took=/) t = substr($i, 6)
        if ($i ~ /^time=/) ts = substr($i, 6)
      }
      if (b < 1048576 || ts == "" || s == "0") next # seq 0 also waits for the ranks to start
      if (t ~ /ms$/) v = substr(t, 1, length(t) - 2) / 1e3
      else if (t ~ /µs$/) v = substr(t, 1, length(t) - 3) / 1e6
      else v = substr(t, 1, length(t) - 1) + 0
      e = mktime(substr(ts, 1, 4) " " substr(ts, 6, 2) " " substr(ts, 9, 2) " " substr(ts, 12, 2) " " substr(ts, 15, 2) " " substr(ts, 18, 2)) + substr(ts, 20, 4)
      if (!(s in lo)) { n++; seqs[n] = s }
      if (!(s in lo) || e - v < lo[s]) lo[s] = e - v
      if (!(s in hi) || e > hi[s]) hi[s] = e
      if (v > wall[s]) wall[s] = v
      size[s] = b
      next
    }
    { t = $1 / 1e9; for (k = 1; k <= n; k++) { s = seqs[k]; if (t > lo[s] && t <= hi[s] + 0.05) { cpu[s] += $3 / 1e6; wt[s] += $4 / 1e6 } } }
    END {
      for (k = 1; k <= n; k++) { s = seqs[k]; m[size[s]]++; w[size[s], m[size[s]]] = wall[s] }
      for (b in m) { c = m[b]; for (i = 1; i <= c; i++) a[i] = w[b, i]; asort(a); med[b] = a[int((c + 1) / 2)]; delete a }
      for (k = 1; k <= n; k++) {
        s = seqs[k]; b = size[s]; cls = wall[s] > slow * med[b] ? "slow" : "ok"
        printf "seq %s: %d B, %.3f s (median %.3f)%s: CPU %d ms, %.0f ms per wall s, run-queue wait %.0f ms per wall s\n", s, b, wall[s], med[b], cls == "slow" ? " SLOW" : "", cpu[s], cpu[s] / wall[s], wt[s] / wall[s]
        g = cls " " b; N[g]++; W[g] += wall[s]; C[g] += cpu[s]; Q[g] += wt[s]
      }
      for (g in N) printf "mean of %s %s-byte calls (%d): %.3f s, CPU %.0f ms a call, %.0f ms per wall s, run-queue wait %.0f ms per wall s\n", substr(g, 1, index(g, " ") - 1), substr(g, index(g, " ") + 1), N[g], W[g] / N[g], C[g] / N[g], C[g] / W[g], Q[g] / W[g]
    }' "$raw" "$OUT/raw/$stamp.sched"
done
