#!/usr/bin/env bash
# ab.sh: perf record -g on every rank of the 16 MiB hierarchical lab job, binaries A and B interleaved
# (ABBA per pair of rounds) in one lab; short (-n 2) and long (-n ITERS) runs each.
# env: LAB, OUT, ITERS, FREQ, A, B (binaries), ROUNDS, XENV
set -euo pipefail
LAB=${LAB:-cpu28ab}
OUT=${OUT:-/tmp/cpu28/ab}
ITERS=${ITERS:-8}
FREQ=${FREQ:-1000}
XARGS=()
for kv in ${XENV:-}; do XARGS+=(-x "$kv"); done
mkdir -p "$OUT"
BIN=$(mktemp -d); chmod 755 $BIN
cp "$A" $BIN/gocoll.A; cp "$B" $BIN/gocoll.B
G=$BIN/gocoll.A
trap '"$G" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf $BIN' EXIT
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
run() {
  local d=$1 it=$2 g=$3
  rm -rf "$d"; mkdir -p "$d"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >"$d/load"
  "$g" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET ${XARGS[@]+"${XARGS[@]}"} -- \
    sh -c "exec perf record -q -F $FREQ -g -o $d/perf.\$\$ $g bench allreduce --sizes 16777216 -n $it -w 1 --algo auto" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >>"$d/load"
}
for r in ${ROUNDS:-1 2}; do
  if (( r % 2 )); then order="A B"; else order="B A"; fi
  for x in $order; do
    run "$OUT/$x.r$r.short" 2 $BIN/gocoll.$x
    run "$OUT/$x.r$r.long" "$ITERS" $BIN/gocoll.$x
  done
done
