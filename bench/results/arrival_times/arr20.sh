#!/usr/bin/env bash
# Session 20, after the end window: GOCOLL_ARRIVAL_TIMES=1 against the default (off), main 57eeddd, quiet.
set -u
cd /tmp/ci20c
Q=/work/wt/notes/s20/arr
go build -o /tmp/g20arr ./cmd/gocoll
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
for round in 1 2; do
  order="off on"; [ $round = 2 ] && order="on off"
  for a in $order; do
    x=""; [ $a = on ] && x="GOCOLL_ARRIVAL_TIMES=1"
    log "hier_lab round $round arrival $a"
    LAB=arr$a RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=hierarchical XENV="$x" GOCOLL=/tmp/g20arr REV=57eeddd OUT=$Q/hier_${round}_$a bash bench/hier_lab.sh > $Q/hier_${round}_$a.txt 2>&1
  done
done
for a in off on; do
  x=""; [ $a = on ] && x="GOCOLL_ARRIVAL_TIMES=1"
  log "cpu_lab arrival $a"
  LAB=arrc$a SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 XENV="$x" GOCOLL=/tmp/g20arr REV=57eeddd OUT=$Q/cpu_$a bash bench/cpu_lab.sh > $Q/cpu_$a.txt 2>&1
done
log done
ip netns list | tee -a $Q/log.txt
