#!/usr/bin/env bash
# tree_channels.sh: the tree AllReduce at SIZE (default 256M) in the
# model_lab grid (2 sites x 2 hosts x 2 ranks, 4 x 200 Mbit/s, 2 ms, MTU
# 9000) on GOCOLL_CHANNELS 1 and 2, interleaved ROUNDS times (default 3;
# ITERS: the bench's -n -w -c, default "-n 2 -w 1 -c 0"):
# whether the channels the overlap term makes the model choose (2 where
# the old model chose 1) run the tree as fast. model30; run from the
# repository's root as root. env: LAB (default model30ch), OUT, GOCOLL.
set -euo pipefail
LAB=${LAB:-model30ch}
SIZE=${SIZE:-256M}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:--n 2 -w 1 -c 0}
OUT=${OUT:-bench/results/model_lab/model30/channels}
PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup tree_channels.sh
lab_build
mkdir -p "$OUT"
b=$(bytes "$SIZE")
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
for round in $(seq "$ROUNDS"); do
  for c in 1 2; do
    raw=$OUT/tree.$SIZE.ch$c.$round.txt
    echo "# tree_channels.sh: channels $c, size $SIZE, round $round, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
    # shellcheck disable=SC2086
    /usr/bin/time -f '# cpu %U %S %e' -o "$BIN/time" "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
      -x GOCOLL_CHANNELS=$c -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT -x GOCOLL_TOPO_DUMP="$(pwd)/${raw%.txt}.topo.json" -- \
      "$G" bench allreduce --sizes "$b" $ITERS --algo tree >>"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
    { cat "$BIN/time"; echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"; } >>"$raw"
    t=$(awk -v s="$b" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$raw" | tail -1)
    echo "round $round channels $c: ${t:-failed} us, $(grep '^# cpu' "$raw"), load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
