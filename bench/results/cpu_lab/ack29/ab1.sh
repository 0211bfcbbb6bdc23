#!/bin/bash
# ab1.sh: cpu_lab.sh rounds, one binary (gocoll.x), variants by env knobs, interleaved.
cd /work/wt/ack29
for r in 1 2; do
  for v in base hold500 lan4; do
    case $v in base) x="";; hold500) x="GOCOLL_X_ACK_HOLD_US=500";; lan4) x="GOCOLL_X_ACK_LAN=4";; esac
    echo "# $(date -u +%T) round $r $v load $(cut -d' ' -f1-3 /proc/loadavg)"
    LAB=ack29a OUT=/tmp/ack29/ab1/$v.$r SIZES=16M ALGOS=auto SPIN=default ITERS=8 GOCOLL=/tmp/ack29/gocoll.x REV=$v XENV="$x" bash bench/cpu_lab.sh 2>&1 | grep "cpu_lab.sh: |"
    echo "# $(date -u +%T) end load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
echo done
