#!/bin/bash
# ab2.sh: cpu_lab.sh, one binary (gocoll.x2), base vs GOCOLL_X_ACK_STREAM=1, ABBA.
cd /work/wt/ack29x
while ! grep -q '^done' /tmp/ack29/ab1.log; do sleep 5; done
i=0
for v in base stream stream base base stream stream base; do
  i=$((i+1))
  case $v in base) x="";; stream) x="GOCOLL_X_ACK_STREAM=1";; esac
  echo "# $(date -u +%T) run $i $v load $(cut -d' ' -f1-3 /proc/loadavg)"
  LAB=ack29b OUT=/tmp/ack29/ab2/$v.$i SIZES=16M ALGOS=auto SPIN=default ITERS=8 GOCOLL=/tmp/ack29/gocoll.x2 REV=$v XENV="$x" bash bench/cpu_lab.sh 2>&1 | grep "cpu_lab.sh: |"
  echo "# $(date -u +%T) end load $(cut -d' ' -f1-3 /proc/loadavg)"
  [[ -e /tmp/ack29/stop ]] && break
done
echo done
