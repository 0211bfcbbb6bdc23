#!/usr/bin/env bash
# Session 20's start reading, machine quiet, main at $(git rev-parse) in a pinned clone /tmp/q20s.
set -u
rm -rf /tmp/q20s && git clone -q /work/main /tmp/q20s && cd /tmp/q20s
Q=/work/wt/notes/s20/q20_start
mkdir -p $Q
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start "$(git rev-parse --short HEAD)"
go build -o /tmp/g20s ./cmd/gocoll
log cpu_lab 16M hierarchical
LAB=q20c SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=/tmp/g20s OUT=$Q/cpu_lab bash bench/cpu_lab.sh > $Q/cpu_lab.txt 2>&1
log hier_lab auto 16M 64M
LAB=q20h RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g20s OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log membw
(cd /work/shared/peers && ls) >> $Q/log.txt
log done
ip netns list | tee -a $Q/log.txt
