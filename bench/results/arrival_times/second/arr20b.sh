#!/usr/bin/env bash
# Session 20: a second cpu_lab A/B of GOCOLL_ARRIVAL_TIMES, order swapped (on first), main 8be8800 (default on).
set -u
cd /tmp/ci20d
Q=/work/wt/notes/s20/arrb
mkdir -p $Q
go build -o /tmp/g20arrb ./cmd/gocoll
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
for a in on off; do
  x="GOCOLL_ARRIVAL_TIMES=1"; [ $a = off ] && x="GOCOLL_ARRIVAL_TIMES=0"
  log "cpu_lab arrival $a"
  LAB=arrb$a SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 XENV="$x" GOCOLL=/tmp/g20arrb REV=8be8800 OUT=$Q/cpu_$a bash bench/cpu_lab.sh > $Q/cpu_$a.txt 2>&1
done
log done
ip netns list | tee -a $Q/log.txt
