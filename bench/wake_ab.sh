#!/usr/bin/env bash
# bench/wake_ab.sh: wake-ups and system calls per DATA datagram of one
# MetaRoCE connection across issue 14's lab WAN, each side apart, for
# gocoll commits side by side, interleaved round by round. Needs root
# (network namespaces), iproute2, iptables and perf (linux-perf).
#
# Usage: bench/wake_ab.sh REV...      (commits, e.g. main HEAD)
#   env: LAB (lab name, default wake), ROUNDS (default 3), TIME (p2p
#        seconds, default 8s), PROCS (GOMAXPROCS of both ranks, default
#        the job ranks' share: cores / 2), XENV (NAME=VALUE settings,
#        space-separated, given to both ranks with gocoll run -x)
#
# The lab is bench/cpu_lab.sh's (2 sites x 2 hosts, 4 WAN paths of 200
# Mbit/s, 2 ms one way, MTU 9000). Each run is `gocoll bench p2p` from
# s1h1 to s2h1 (rank 0 sends 4 MiB messages, 16 MiB in flight), each rank
# under perf stat. cpu_lab.sh sums the two ranks; this script keeps them
# apart, because the sender's wake-ups (ACKs, its timer) and the
# receiver's (one per arrival while it sleeps in Go's poller) have
# different causes. Each line: commit, round, load before and after, MiB
# moved, DATA datagrams (rank 0's engine counters at close), then for the
# sender (s) and the receiver (r): CPU-us, context switches, epoll_pwait,
# sched_yield, futex, recvmmsg and sendmmsg per DATA datagram, and the
# engine's read batches, spin batches and timer runs per DATA datagram;
# last, the DATA packets the sender resent (p2p's total line).
# Wall-clock goodput (MiB) is noise on a loaded machine; the counts per
# datagram are the figures to compare. It is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: bench/wake_ab.sh REV..." >&2; exit 2; }
LAB=${LAB:-wake} ROUNDS=${ROUNDS:-3} TIME=${TIME:-8s}
CORES=$(nproc)
PROCS=${PROCS:-$((CORES / 2 > 0 ? CORES / 2 : 1))}
XARGS=()
for kv in ${XENV:-}; do
  [[ $kv == GOCOLL_*=* ]] || { echo "bench/wake_ab.sh: XENV entry $kv: want GOCOLL_NAME=VALUE" >&2; exit 2; }
  XARGS+=(-x "$kv")
done
. bench/lab_common.sh
lab_setup wake_ab.sh
# shellcheck source=bench/build_revs.sh
. bench/build_revs.sh
build_revs "$BIN" "$@"
cp "$BIN/gocoll-${labels[0]}" "$G"
perf stat -e task-clock true >/dev/null 2>&1 || { echo "bench/wake_ab.sh: needs perf" >&2; exit 2; }
EV=task-clock,context-switches
for s in epoll_pwait sched_yield futex recvmmsg sendmmsg; do EV+=,syscalls:sys_enter_$s; done
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 1 | grep -E "^$LAB-(s1h1|s2h1) " >"$BIN/hosts"
echo "# commit round load MiB DATA | per DATA datagram, sender s and receiver r: cpu_us ctx_switches epoll_pwait sched_yield futex recvmmsg sendmmsg read_batches spin_batches timer_runs; DATA resent (GOMAXPROCS $PROCS)"
for round in $(seq "$ROUNDS"); do
  for l in "${labels[@]}"; do
    b=$BIN/gocoll-$l d=$BIN/run
    rm -rf "$d" && mkdir -p "$d"
    load0=$(cut -d' ' -f1 /proc/loadavg)
    "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info \
      -x GOMAXPROCS="$PROCS" ${XARGS[@]+"${XARGS[@]}"} -- \
      sh -c "exec perf stat -x, -e $EV -o $d/rank.\$GOCOLL_RANK $b bench p2p --time $TIME" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
    load1=$(cut -d' ' -f1 /proc/loadavg)
    for k in 0 1; do
      awk -F, -v k="$k" '$1 ~ /^[0-9.]+$/ && $3 != "" { sub(/^syscalls:sys_enter_/, "", $3); print "perf" k, $3, $1 }' "$d/rank.$k" 2>/dev/null || true
    done >"$d/counts"
    awk '/msg="mrtransport: engine"/ { r = ""; for (i = 1; i <= NF; i++) if ($i ~ /^rank=/) r = substr($i, 6)
        for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] ~ /^(data|readBatches|spinBatches|timerRuns)$/) print "eng" r, kv[1], kv[2] }
      /# total:/ { for (i = 1; i <= NF; i++) { if ($i == "MiB") print "mib", "mib", $(i - 1); if ($i == "resent") print "mib", "resent", $(i - 2) } }' "$d/out" >>"$d/counts"
    awk -v l="$l" -v rd="$round" -v ld="$load0-$load1" '{ v[$1, $2] = $3 }
      function side(k, dg) { return sprintf("%.1f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f", v["perf" k, "task-clock"] * 1000 / dg,
          v["perf" k, "context-switches"] / dg, v["perf" k, "epoll_pwait"] / dg, v["perf" k, "sched_yield"] / dg, v["perf" k, "futex"] / dg,
          v["perf" k, "recvmmsg"] / dg, v["perf" k, "sendmmsg"] / dg, v["eng" k, "readBatches"] / dg, v["eng" k, "spinBatches"] / dg, v["eng" k, "timerRuns"] / dg) }
      END { dg = v["eng0", "data"]; if (dg <= 0) { print l, rd, ld, "failed"; exit }
        print l, rd, ld, v["mib", "mib"] + 0, dg, "| s", side(0, dg), "| r", side(1, dg), "| resent", v["mib", "resent"] + 0 }' "$d/counts"
  done
done
