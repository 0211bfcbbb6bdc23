#!/usr/bin/env bash
# start32's 3-way interleaved lab A/B (after bench/hier_ab.sh): binaries in /tmp/start32_bin_{main,a,b}/gocoll,
# rotated order each round; XENV entries given with -x. Output: rows "binary size oop_us inplace_us round load".
set -uo pipefail
LAB=${LAB:-start32ab} ROUNDS=${ROUNDS:-4} SIZES=${SIZES:-16777216,67108864} ITERS=${ITERS:-5} OUT=${OUT:-/tmp/start32_ab3}
VERS=(${VERS:-main a b})
mkdir -p $OUT
G=/tmp/start32_bin_main/gocoll
$G lab down --name $LAB >/dev/null 2>&1 || true
$G lab up --name $LAB --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G lab hostfile --name $LAB --slots 2 > $OUT/hosts
xenv=(); for x in ${XENV:-}; do xenv+=(-x "$x"); done
n=${#VERS[@]}
for round in $(seq $ROUNDS); do
  for k in $(seq 0 $((n-1))); do
    v=${VERS[$(( (k + round) % n ))]}
    B=/tmp/start32_bin_$v/gocoll
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "# round $round $v: load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)"
    $B run --hostfile $OUT/hosts --rsh 'ip netns exec {host}' --timeout 600s "${xenv[@]}" -- \
      $B bench allreduce --sizes "$SIZES" -n "$ITERS" -w 1 --algo hierarchical > $OUT/out.$round.$v 2>&1 ||
      echo "# round $round $v failed: $(grep -m1 -i failed $OUT/out.$round.$v | cut -c1-200)"
    awk -v v=$v -v r=$round -v l=$load '$1 == "[rank" && $2 == "0]" && $3 ~ /^[0-9]+$/ && NF >= 14 { print v, $3, $8, $12, r, l }' $OUT/out.$round.$v | tee -a $OUT/rows
  done
done
$G lab down --name $LAB >/dev/null 2>&1
