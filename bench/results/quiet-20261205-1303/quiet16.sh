#!/usr/bin/env bash
# Session 16's quiet window. Run from a pinned clone /tmp/q16 at the final commit: bash quiet16.sh Q
set -u
cd /tmp/q16
Q=bench/results/$1
mkdir -p $Q
cp /work/wt/notes/quiet16.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start $(git rev-parse --short HEAD)
go build -o /tmp/g16 ./cmd/gocoll
P=/work/shared/peers
log shm_ab
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh 1608c02 HEAD > $Q/shm_ab.txt 2>&1
log shm_ab scale100
NICE=-20 ROUNDS=5 SCALE=100 COLLS=broadcast,allreduce SIZES=8 PEERS_DIR=$P bash bench/shm_ab.sh 1608c02 HEAD > $Q/shm_ab_scale100.txt 2>&1
log hier_lab
LAB=q16hl OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log model_lab sweep
LAB=q16ms SIZES="8 1K 64K 1M 4M 16M 64M 256M" ALGOS="hierarchical ring tree recursive-doubling auto" ALGO_MAX="recursive-doubling=4M" ROUNDS=1 DET_SIZE="" OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log shm_ab small 2
NICE=-20 ROUNDS=7 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_small2.txt 2>&1
log shm_ab bind core
NICE=-20 BIND=core ROUNDS=5 COLLS=alltoall SIZES="65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_bind.txt 2>&1
log cpu_lab
LAB=q16c OUT=$Q/cpu_lab SIZES=16M ALGOS="auto" SPIN=default bash bench/cpu_lab.sh > $Q/cpu_lab.txt 2>&1
log hier_lab 2
LAB=q16h2 OUT=$Q/hier_lab2 bash bench/hier_lab.sh > $Q/hier_lab2.txt 2>&1
log idle share of an 8 B Broadcast loop
for r in 1 2 3; do
  a=$(head -1 /proc/stat); t0=$(date +%s.%N)
  /tmp/g16 bench broadcast -np 4 --sizes 8 -w 50 -n 200000 -c 1 --format peers > $Q/idle8.$r.txt 2>&1
  b=$(head -1 /proc/stat); t1=$(date +%s.%N)
  echo "run $r: before $a | after $b | wall $t0 $t1" >> $Q/idle8.txt
done
log small8
bash /work/wt/notes/small8.sh /tmp/g16 $Q/small8 > $Q/small8.txt 2>&1
log done
ip netns list | tee -a $Q/log.txt
