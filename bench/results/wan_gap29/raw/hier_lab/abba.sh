#!/bin/bash
cd /work/wt/ramp29
for run in A3:main B3:arena B4:arena A4:main; do
  n=${run%%:*}; b=${run##*:}
  echo "$n $b start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/ramp29/abba.log
  LAB=ramp29h ALGOS=auto SIZES="16M 64M" GOCOLL=/tmp/ramp29/gocoll.$b REV=$b OUT=/tmp/ramp29/hl_$n bash bench/hier_lab.sh > /tmp/ramp29/hl_$n.txt 2>&1
  echo "$n $b end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) rc $?" >> /tmp/ramp29/abba.log
done
