#!/bin/bash
# interleaved old/new wan_floor rounds
cd /work/wt/wire26
for r in 1 2 3; do
  for b in old new; do
    echo "=== round $r $b $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    LAB=wire26f GOCOLL=/tmp/wire26/gocoll.$b OUT=/tmp/wire26/wan_floor.$b ROUNDS=1 ITERS=10 MODES="${MODES:-p2p ring8}" bash bench/wan_floor.sh 2>&1 | grep "bench/wan_floor.sh: |"
  done
done
echo ALLDONE
