#!/bin/bash
# interleaved traced wan_trace runs: tmain (main + the temporary trace, d7a69dcc) and a (1c3d22e7), GOCOLL_PROBE=0
cd /work/wt/start32
for r in $(seq $1 $2); do
  vs="tmain a"; [[ $((r % 2)) == 0 ]] && vs="a tmain"
  for v in $vs; do
    b=/tmp/start32_bin_$v/gocoll
    td=/tmp/start32_tr_${v}_$r; rm -rf $td; mkdir -p $td
    echo "# round $r $v: load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)"
    LAB=start32w GOCOLL=$b SCHED=1 XENV="GOCOLL_PROBE=0 GOCOLL_HIERTRACE=$td" OUT=bench/results/start32/wtt_$v bash bench/wan_trace.sh > bench/results/start32/wtt_${v}_$r.txt 2>&1
    grep "^mean\|wan_trace.sh 2" bench/results/start32/wtt_${v}_$r.txt | grep -v cpu
  done
done
