#!/usr/bin/env bash
# Session 13's quiet window. Run from a pinned clone /tmp/q13 at the final commit.
set -u
cd /tmp/q13
Q=bench/results/quiet-20261205-0500
mkdir -p $Q
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start $(git rev-parse --short HEAD)
go build -o /tmp/g13 ./cmd/gocoll
log shm_ab
ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216" PEERS_DIR=/work/shared/peers bash bench/shm_ab.sh 697a0b5 HEAD > $Q/shm_ab.txt 2>&1
log hier_lab band on
LAB=q13hl OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log hier_lab band off
LAB=q13hf LAB_UP_FLAGS="--prio-dscp -1" OUT=$Q/hier_lab_fifo bash bench/hier_lab.sh > $Q/hier_lab_fifo.txt 2>&1
log model_lab
LAB=q13m OUT=$Q/model_lab SIZES="8 64K 4M 256M" ROUNDS=1 DET_SIZE="" bash bench/model_lab.sh > $Q/model_lab.txt 2>&1
log kernels
gcc -O3 -march=native /work/shared/peers/membw.c -o /tmp/membw13
{ /tmp/membw13 -s 67108864 -r 20; /tmp/membw13 -s 262144 -r 2000; } > $Q/membw.txt 2>&1
go test -run XXX -bench '^BenchmarkKernel$' -benchtime 1s ./collective/reduce/ > $Q/kernels.txt 2>&1
{ /tmp/membw13 -s 67108864 -r 20; /tmp/membw13 -s 262144 -r 2000; } >> $Q/membw.txt 2>&1
log dtype16
for r in 1 2 3; do for d in float bf16 half; do
  echo "round $r dtype $d" >> $Q/dtype16.txt
  /tmp/g13 bench allreduce -np 4 -b 16M -e 16M -d $d -n 20 -w 2 >> $Q/dtype16.txt 2>&1
done; done
log small8
bash /work/wt/notes/small8.sh /tmp/g13 $Q/small8 > $Q/small8.txt 2>&1
log cpu_lab
LAB=q13c OUT=$Q/cpu_lab SIZES=16M ALGOS="auto ring" SPIN=default bash bench/cpu_lab.sh > $Q/cpu_lab.txt 2>&1
log done
ip netns list | tee -a $Q/log.txt
