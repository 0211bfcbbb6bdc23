#!/usr/bin/env bash
cd /tmp/q23e
Q=bench/results/quiet-20261206-1403/ring_ab
mkdir -p $Q
for round in 1 2 3; do
  order="base head nocrowd"; [ $round = 2 ] && order="nocrowd head base"
  for b in $order; do
    case $b in base) G=/tmp/g23base R=dc14656 ;; head) G=/tmp/g23e R=9f2d237 ;; nocrowd) G=/tmp/g23nocrowd R=9f2d237-nocrowd ;; esac
    echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): round $round $b" >> $Q/log.txt
    LAB=q23r$b RATE=200 WARMUP=3 ITERS=10 SIZES="4M 16M" ALGOS=ring GOCOLL=$G REV=$R OUT=$Q/r${round}_$b bash bench/hier_lab.sh > $Q/r${round}_$b.txt 2>&1
  done
done
echo done >> $Q/log.txt
