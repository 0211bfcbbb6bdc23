#!/usr/bin/env bash
# bench/wan_trace.sh: where the wall time of issue 14's lab AllReduce goes
# on the WAN. Needs root (network namespaces), iproute2 and iptables.
#
# Usage: bench/wan_trace.sh
#   env: LAB (lab name, default wantrace), LAB_UP_FLAGS (more flags of `gocoll lab up`,
#        e.g. "--prio-dscp -1": the rate limiters one FIFO, no band for MetaRoCE's control class), OUT (default
#        bench/results/wan_trace), SIZE (bytes, default 16777216), ALGO
#        (default hierarchical), ITERS (timed calls, default 3), BIN_MS
#        (the series' bin, default 5), GOCOLL (a gocoll binary instead of
#        building this tree's), RATE (each WAN path's Mbit/s, default 200),
#        DELAY (one-way WAN delay in ms, default 2), WARMUP (warm-up calls,
#        default 1), CHECK (bench -c: checked calls after each
#        measurement, default 0, so that the last call is a timed one),
#        SCHED (1: bench/schedsample samples the job's and the daemons'
#        threads every 5 ms into RAWDIR/sched, and the split gives each
#        part's CPU; the sampler itself takes a few % of a core), XENV
#        (NAME=VALUE settings, space-separated, given to every rank with
#        gocoll run -x, as hier_lab.sh's: e.g. GOMAXPROCS=2), PERF (1: perf
#        records every context switch and wake-up of the machine over the
#        job (CLOCK_MONOTONIC; RAWDIR/clocks: that clock and the wall clock
#        read together, in ns) into RAWDIR/perf.data, and RAWDIR/pids the
#        pids in each of the lab's namespaces 3 s into the job, for
#        bench/wan_stops.py: what ran while every WAN path stopped; PERF=2:
#        samples of the CPUs' stacks at 1999 Hz instead; PERF=3: as 1,
#        and each packet's hand-over from a WAN link's qdisc to its veth,
#        the emulated wire: net:net_dev_xmit)
#
# The lab is hier_lab.sh's (2 sites x 2 hosts x 2 ranks, 4 WAN paths of
# RATE Mbit/s, DELAY ms one way, MTU 9000), brought up with the delay daemons'
# per-packet trace (GOCOLL_DELAYD_TRACE). One job runs `gocoll bench
# allreduce` with GOCOLL_DEBUG_SUBSYS=COLL (each call's end and length in
# rank 0's lines); then the daemons write their traces. For the last call
# it prints, per BIN_MS, the bytes each WAN path and direction (an NFQUEUE
# queue: the lower site's 4 then the higher's, or the reverse) released into
# its rate limiter, as a % of the path's rate (above 100: the tbf queues or
# drops), and each queue's use over the call. The machine's CPU over the
# job (all of /proc/stat's first line: user, system, softirq, idle...) and
# the lab's tbf drops and MetaRoCE's own counts for its WAN paths (resent,
# lost, timeouts and spurious ones, from GOCOLL_DEBUG_SUBSYS=NET's close
# figures) go beside it. A link below 100 % while the call runs
# is a link idle while data waits to cross (or a call not yet on the WAN).
# Then bench/wan_split.sh splits every call (before the first WAN byte,
# start, middle, tail, after) and gives the timed calls' means; with PERF=1
# or 3, bench/wan_stops.py last says what the cores ran while every WAN
# path stopped (RAWDIR/stops.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-wantrace}
OUT=${OUT:-bench/results/wan_trace}
SIZE=${SIZE:-16777216}
ALGO=${ALGO:-hierarchical}
ITERS=${ITERS:-3}
BIN_MS=${BIN_MS:-5}
RATE=${RATE:-200}
DELAY=${DELAY:-2}
WARMUP=${WARMUP:-1}

. bench/lab_common.sh
lab_setup wan_trace.sh
lab_build
stamp=$(date -u +%Y%m%d-%H%M%S)
D=$OUT/raw/$stamp
mkdir -p "$D"

"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
GOCOLL_DELAYD_TRACE=$BIN/trace "$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site 2 --paths 4 --rate "$RATE" --delay "$DELAY" --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
head -1 /proc/stat >"$D/stat.before"
"$G" lab stats --name "$LAB" >"$D/stats.before"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
xenv=()
for x in ${XENV:-}; do
  [[ $x == [A-Z]*=* ]] || { echo "bench/wan_trace.sh: XENV entry $x: want NAME=VALUE" >&2; exit 2; }
  xenv+=(-x "$x")
done
sched=
if [[ ${SCHED:-0} == 1 ]]; then
  go build -o "$BIN/schedsample" ./bench/schedsample
  "$BIN/schedsample" -group "job=bench allreduce --sizes" -group "daemons=lab delayd --config /run/gocoll-lab/$LAB/" >"$D/sched" &
  sched=$!
fi
perf=
if [[ ${PERF:-0} == [123] ]]; then
  python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC), time.time_ns())' >"$D/clocks"
  pev=(-e sched:sched_switch -e sched:sched_wakeup)
  [[ ${PERF:-0} == 2 ]] && pev=(-F 1999 -g)
  [[ ${PERF:-0} == 3 ]] && pev=(-e net:net_dev_xmit --filter 'name ~ "s[1-4]p*"' "${pev[@]}")
  perf record -q -a -k CLOCK_MONOTONIC "${pev[@]}" -o "$D/perf.data" 2>"$D/perf.log" &
  perf=$!
  (sleep 3; for n in $(ip netns list | cut -d' ' -f1 | grep "^$LAB-"); do echo "$n" $(ip netns pids "$n"); done >"$D/pids") &
  sleep 1
fi
"$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 300s \
  -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET "${xenv[@]}" -- \
  "$G" bench allreduce --sizes "$SIZE" -n "$ITERS" -w "$WARMUP" -c "${CHECK:-0}" --algo "$ALGO" >"$D/out" 2>&1 || echo "# run failed: $?" >>"$D/out"
if [[ -n $sched ]]; then kill "$sched"; wait "$sched" || true; fi
if [[ -n $perf ]]; then kill -INT "$perf"; wait "$perf" || true; fi
head -1 /proc/stat >"$D/stat.after"
"$G" lab stats --name "$LAB" >"$D/stats.after"
for p in $(pgrep -f "lab delayd --config /run/gocoll-lab/$LAB/" || true); do kill -USR1 "$p"; done
sleep 2
cat "$BIN"/trace.* >"$D/trace"
"$G" lab down --name "$LAB" >/dev/null
gzip -f "$D/trace"

# The last call: its end (rank 0's log time, ms resolution) and length.
read -r end took < <(sed -n 's/^\[rank 0\] time=\([^ ]*\) .*msg="gocoll: coll" .*op=AllReduce .* bytes='"$SIZE"' took=\([0-9.]*\)\(ms\|s\)$/\1 \2 \3/p' "$D/out" |
  tail -1 | awk '{ cmd = "date -d " $1 " +%s.%N"; cmd | getline e; close(cmd); t = $2; if ($3 == "s") t *= 1000; printf "%.6f %.3f\n", e, t }')
{
  echo "# bench/wan_trace.sh $stamp: $ALGO AllReduce of $SIZE B, last of $ITERS timed calls (-w $WARMUP), 4 WAN paths x $RATE Mbit/s, $DELAY ms: ${took} ms; load before $load0"
  echo "# machine CPU over the job (/proc/stat, % of all cores): $(paste "$D/stat.before" "$D/stat.after" | awk '{ n = (NF - 2) / 2; split("user nice system idle iowait irq softirq steal", k, " "); t = 0; for (i = 2; i <= n; i++) { d[i] = $(i + n + 1) - $i; t += d[i] } for (i = 2; i <= 9 && i <= n; i++) printf "%s %.0f%% ", k[i - 1], 100 * d[i] / t }')"
  # Every rank's close figures for its paths to the other site (ranks 0-3
  # are site 1: the hostfile lists s1h1, s1h2, s2h1, s2h2 with 2 slots).
  echo "# MetaRoCE's WAN paths over the job, summed over all ranks: $(sed -n 's/^\[rank \([0-9]*\)\] .*msg="gocoll: path" rank=[0-9]* peer=\([0-9]*\) .* resent=\([0-9]*\) lost=\([0-9]*\) timeouts=\([0-9]*\) spurious=\([0-9]*\) .*/\1 \2 \3 \4 \5 \6/p' "$D/out" |
    awk 'int($1 / 4) != int($2 / 4) { r += $3; l += $4; t += $5; s += $6 } END { printf "resent %d, lost %d, timeouts %d (spurious %d)", r, l, t, s }')"
  # The same for the paths within a site (the LAN: no rate limiter, so a
  # loss there is a socket buffer that overflowed or a late ACK taken
  # for one, and a timeout a rank not scheduled in time), with their
  # packets and mean smoothed RTT (the fabric's is tens of us).
  echo "# MetaRoCE's LAN paths (within a site) over the job: $(sed -n 's/^\[rank \([0-9]*\)\] .*msg="gocoll: path" rank=[0-9]* peer=\([0-9]*\) .* packets=\([0-9]*\) resent=\([0-9]*\) lost=\([0-9]*\) timeouts=\([0-9]*\) spurious=\([0-9]*\) srtt=\([0-9.]*\)\(m\|µ\)s.*/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$D/out" |
    awk 'int($1 / 4) == int($2 / 4) { n++; p += $3; r += $4; l += $5; t += $6; s += $7; v += ($9 == "m") ? $8 : $8 / 1000 } END { printf "packets %d, resent %d, lost %d, timeouts %d (spurious %d), mean srtt %.1f ms over %d paths", p, r, l, t, s, (n ? v / n : 0), n }')"
  echo "# tbf drops over the job, per path and direction: $(paste "$D/stats.before" "$D/stats.after" | awk '$1 ~ /^s[0-9]/ { printf "%s/%s %d ", $1, $2, $(NF/2 + 7) - $7 }')"
  zcat "$D/trace.gz" | awk -v end="$end" -v took="$took" -v bin="$BIN_MS" -v rate="$RATE" '
    /^# start/ { start = $3 / 1e9; next } /^#/ { next }
    { t = start + $6 / 1e9; lo = end - took / 1000 - 0.005; hi = end + 0.005
      if (t < lo || t >= hi) next
      q[$1] = 1; b = int((t - lo) * 1000 / bin); by[$1, b] += $2; if (b > nb) nb = b
      if ($2 > 1000) data[$1] += $2 }
    END {
      n = 0; for (k in q) qs[++n] = k + 0
      for (i = 2; i <= n; i++) for (j = i; j > 1 && qs[j - 1] > qs[j]; j--) { x = qs[j]; qs[j] = qs[j - 1]; qs[j - 1] = x }
      cap = rate * 1e6 / 8 * bin / 1000
      printf "# %% of each path-direction queue'"'"'s rate released per %d ms (5 ms before the call to 5 after)\n  ms", bin
      for (i = 1; i <= n; i++) printf " %5s", qs[i]; print ""
      for (b = 0; b <= nb; b++) { printf "%4d", b * bin; for (i = 1; i <= n; i++) printf " %5.0f", 100 * by[qs[i], b] / cap; print "" }
      printf "# data bytes over the call as %% of the path rate x (call + 10 ms):"
      for (i = 1; i <= n; i++) printf " %s %.0f%%", qs[i], 100 * data[qs[i]] / (rate * 1e6 / 8 * (took / 1000 + 0.01)); print ""
    }'
} >"$D/series.txt"
cat "$D/series.txt"
SIZE=$SIZE RATE=$RATE BIN_MS=$BIN_MS ITERS=$ITERS bash bench/wan_split.sh "$D" | tee "$D/split.txt"
if [[ ${PERF:-0} == [13] ]]; then
  SIZE=$SIZE python3 bench/wan_stops.py "$D" | tee "$D/stops.txt"
fi
