#!/usr/bin/env bash
# abtime.sh (a copy of cpu_lab/cpu29/abtime.sh with GOCOLL_PROBE=0): binaries A and B (ABBA per pair of rounds) in one lab, the 16 MiB hierarchical job with -n ITERS,
# no perf: each rank under /usr/bin/time (user+sys CPU-s of the whole run); rank 0's bench line gives the time a call.
# DIR/delayd: the lab's delay daemons' CPU ticks over the run (bench/lab_common.sh's delayd_ticks; CLK_TCK in DIR/hz).
set -euo pipefail
LAB=${LAB:-cpu29t}; OUT=${OUT:-/tmp/cpu29/t}; ITERS=${ITERS:-8}
mkdir -p "$OUT"
BIN=$(mktemp -d); chmod 755 $BIN
cp "$A" $BIN/gocoll.A; cp "$B" $BIN/gocoll.B
G=$BIN/gocoll.A
trap '"$G" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf $BIN' EXIT
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
source "$(dirname "$0")/../../lab_common.sh"
DPIDS=$(delayd_pids)
for r in ${ROUNDS:-1 2}; do
  if (( r % 2 )); then order="A B"; else order="B A"; fi
  for x in $order; do
    d=$OUT/$x.r$r; rm -rf $d; mkdir -p $d; g=$BIN/gocoll.$x
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >"$d/load"
    t0=$(delayd_ticks)
    "$g" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
      -x GOCOLL_PROBE=0 -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET -- \
      sh -c "exec /usr/bin/time -f '%U %S' -o $d/cpu.\$\$ $g bench allreduce --sizes 16777216 -n $ITERS -w 1 --algo auto" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
    echo $(($(delayd_ticks) - t0)) >"$d/delayd"; getconf CLK_TCK >"$d/hz"
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >>"$d/load"
  done
done
