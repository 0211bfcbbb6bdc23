#!/usr/bin/env bash
# Session 19's end quiet window (after the helpers stopped). Run from a pinned clone /tmp/q19e at main's head:
# bash quiet19.sh DIR   (DIR under bench/results/)
set -u
cd /tmp/q19e
Q=bench/results/$1
BASE=724264b
mkdir -p $Q
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
P=/work/shared/peers
log resumed after the syntax error at line 27
log kernels 64MiB
OUT=$Q/kernels64m ROUNDS=3 SIZE=64MiB BASE=$BASE KERNELS='^(float32|float8e4m3|float8e5m2|bfloat16|float16)$/.*' bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
log kernels 256KiB
OUT=$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log shm_ab
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log a2a_bound 64M
NICE=-20 ROUNDS=5 bash bench/a2a_bound.sh > $Q/a2a_bound.txt 2>&1
log shm_ab sweep
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log model_lab sweep
LAB=q19ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=1 DET_SIZE="" OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log hier_lab HEAD, ring
LAB=q19ehl ALGOS=ring OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw
ip netns list | tee -a $Q/log.txt
