#!/usr/bin/env bash
# ab.sh NAME ROUNDS BIN_A BIN_B: interleaved cpu_lab A/B (A first in odd rounds, B first in even ones).
NAME=$1; R=$2; A=$3; B=$4
cd /work/wt/wake22
for ((r = ${R0:-1}; r <= R; r++)); do
  order="A B"; ((r % 2 == 0)) && order="B A"
  for t in $order; do
    bin=$A; [[ $t == B ]] && bin=$B
    echo "== $NAME round $r $t ($bin) $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    LAB=wake22 SIZES=16M ALGOS=hierarchical SPIN=default ITERS=8 GOCOLL=$bin OUT=/tmp/wake22/out/$NAME.$t.$r REV=$t bash bench/cpu_lab.sh 2>&1 | grep -E "^bench/cpu_lab.sh:|^- |^Run |^\|"
  done
done
echo "== end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
