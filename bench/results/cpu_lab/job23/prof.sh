#!/usr/bin/env bash
# prof.sh: perf record -g on every rank of the lab job, short (-n 2) and long (-n ITERS) runs.
set -euo pipefail
cd /work/wt/job23
LAB=${LAB:-job23p}
OUT=${OUT:-/tmp/job23/prof}
ITERS=${ITERS:-8}
FREQ=${FREQ:-1000}
G=${GOCOLL:-/tmp/job23/gocoll}
XARGS=()
for kv in ${XENV:-}; do XARGS+=(-x "$kv"); done
mkdir -p "$OUT"
BIN=$(mktemp -d); chmod 755 $BIN
cp "$G" $BIN/gocoll; G=$BIN/gocoll
trap '"$G" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf $BIN' EXIT
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
DPIDS=$(pgrep -f "lab delayd --config /run/gocoll-lab/$LAB/" || true)
delayd_ticks() { local t=0 p; for p in $DPIDS; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo $t; }
run() {
  local d=$1 it=$2 t0
  rm -rf "$d"; mkdir -p "$d"
  t0=$(delayd_ticks)
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL ${XARGS[@]+"${XARGS[@]}"} -- \
    sh -c "exec perf record -q -F $FREQ -g -o $d/perf.\$\$ $G bench allreduce --sizes 16777216 -n $it -w 1 --algo auto" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
  echo $(($(delayd_ticks) - t0)) >"$d/delayd"
}
for r in ${ROUNDS:-1}; do
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/load.$r"
  run "$OUT/r$r.short" 2
  run "$OUT/r$r.long" "$ITERS"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/load.$r"
done
