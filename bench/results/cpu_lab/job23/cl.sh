#!/usr/bin/env bash
# cpu_lab.sh A/B, ABBA: main 9ae5911 (base) against 6edb575 (joint)
cd /work/wt/job23
for r in ${RS:-1 2}; do
  order="base joint"; (( r % 2 == 0 )) && order="joint base"
  for v in $order; do
    g=/tmp/job23/gocoll; [[ $v == joint ]] && g=/tmp/job23/gocoll.joint
    LAB=job23cl OUT=/tmp/job23/cl/$v.r$r SIZES=16M ALGOS=auto SPIN=default ITERS=8 GOCOLL=$g REV=$v bash bench/cpu_lab.sh > /tmp/job23/cl/$v.r$r.log 2>&1
  done
done
