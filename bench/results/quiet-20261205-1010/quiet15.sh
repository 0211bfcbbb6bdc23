#!/usr/bin/env bash
# Session 15's quiet window. Run from a pinned clone /tmp/q15 at the final commit.
set -u
cd /tmp/q15
Q=bench/results/quiet-20261205-1010
mkdir -p $Q
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start $(git rev-parse --short HEAD)
go build -o /tmp/g15 ./cmd/gocoll
log shm_ab
ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=/work/shared/peers bash bench/shm_ab.sh 94b1dfd HEAD > $Q/shm_ab.txt 2>&1
log shm_ab small 2
ROUNDS=7 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536" PEERS_DIR=/work/shared/peers bash bench/shm_ab.sh HEAD > $Q/shm_ab_small2.txt 2>&1
log hier_lab
LAB=q15hl OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log model_lab
LAB=q15m OUT=$Q/model_lab SIZES="8 64K 4M 256M" ROUNDS=1 DET_SIZE="" bash bench/model_lab.sh > $Q/model_lab.txt 2>&1
log kernels
OUT=$Q/kernels64 ROUNDS=2 SIZE=64MiB bash bench/kernels_ab.sh > $Q/kernels64.txt 2>&1
OUT=$Q/kernels256 ROUNDS=1 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
rm -f $Q/kernels64/reduce.test $Q/kernels64/membw $Q/kernels256/reduce.test $Q/kernels256/membw
log dtype16
for r in 1 2 3; do for d in float bf16 half; do
  echo "round $r dtype $d" >> $Q/dtype16.txt
  /tmp/g15 bench allreduce -np 4 -b 16M -e 16M -d $d -n 20 -w 2 >> $Q/dtype16.txt 2>&1
done; done
log small8
bash /work/wt/notes/small8.sh /tmp/g15 $Q/small8 > $Q/small8.txt 2>&1
log cpu_lab
LAB=q15c OUT=$Q/cpu_lab SIZES=16M ALGOS="auto ring" SPIN=default bash bench/cpu_lab.sh > $Q/cpu_lab.txt 2>&1
log hier_lab 2
LAB=q15h2 OUT=$Q/hier_lab2 bash bench/hier_lab.sh > $Q/hier_lab2.txt 2>&1
log model_lab 2
LAB=q15m2 OUT=$Q/model_lab2 SIZES="8 64K 4M" ROUNDS=2 DET_SIZE="" bash bench/model_lab.sh > $Q/model_lab2.txt 2>&1
log shm_ab small 3
ROUNDS=7 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536" PEERS_DIR=/work/shared/peers bash bench/shm_ab.sh HEAD > $Q/shm_ab_small3.txt 2>&1
log done
ip netns list | tee -a $Q/log.txt
