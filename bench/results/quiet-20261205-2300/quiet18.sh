#!/usr/bin/env bash
# Session 18's first quiet window (fresh Intel machine, nothing else running).
# Run from a pinned clone /tmp/q18 at main's head: bash quiet18.sh Q
set -u
cd /tmp/q18
Q=bench/results/$1
mkdir -p $Q
cp /work/wt/notes/quiet18.sh /work/wt/notes/small8.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start $(git rev-parse --short HEAD)
go build -o /tmp/g18 ./cmd/gocoll
P=/work/shared/peers
log shm_ab
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh 3e4f56f HEAD > $Q/shm_ab.txt 2>&1
log shm_ab scale100
NICE=-20 ROUNDS=5 SCALE=100 COLLS=broadcast,allreduce SIZES=8 PEERS_DIR=$P bash bench/shm_ab.sh 3e4f56f HEAD > $Q/shm_ab_scale100.txt 2>&1
log kernels 256KiB
OUT=$Q/kernels256 ROUNDS=1 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log dtype16
for r in 1 2 3; do for d in float bf16 half; do
  echo "round $r dtype $d" >> $Q/dtype16.txt
  /tmp/g18 bench allreduce -np 4 -b 16M -e 16M -d $d -n 20 -w 2 >> $Q/dtype16.txt 2>&1
done; done
log hier_lab
LAB=q18hl OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log model_lab sweep
LAB=q18ms SIZES="8 1K 64K 1M 4M 16M 64M 256M" ALGOS="hierarchical ring tree recursive-doubling auto" ALGO_MAX="recursive-doubling=4M" ROUNDS=1 DET_SIZE="" OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log shm_ab small 2
NICE=-20 ROUNDS=7 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_small2.txt 2>&1
log cpu_lab
LAB=q18c OUT=$Q/cpu_lab SIZES=16M ALGOS="auto" SPIN=default bash bench/cpu_lab.sh > $Q/cpu_lab.txt 2>&1
log kernels 64MiB
OUT=$Q/kernels64m ROUNDS=1 SIZE=64MiB bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
log small8
bash /work/wt/notes/small8.sh /tmp/g18 $Q/small8 > $Q/small8.txt 2>&1
log done
ip netns list | tee -a $Q/log.txt
