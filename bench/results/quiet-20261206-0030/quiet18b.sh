#!/usr/bin/env bash
# Session 18's second quiet window (after the helpers stopped). Run from a pinned clone /tmp/q18b at main's head:
# bash quiet18b.sh Q
set -u
cd /tmp/q18b
Q=bench/results/$1
mkdir -p $Q
cp /work/wt/notes/quiet18b.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
log start $(git rev-parse --short HEAD)
go build -o /tmp/g18b ./cmd/gocoll
P=/work/shared/peers
log shm_ab
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh 4f35ff4 HEAD > $Q/shm_ab.txt 2>&1
log shm_ab sweep
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log hier_lab
LAB=q18bhl OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log hier_lab A/B 4f35ff4 vs HEAD, -w 5 -n 20, 200 and 50 Mbit/s
rm -rf /tmp/q18base && mkdir -p /tmp/q18base && git archive 4f35ff4 | tar -x -C /tmp/q18base && (cd /tmp/q18base && go build -o /tmp/g4f ./cmd/gocoll)
for rate in 200 50; do
  for b in base head; do
    if [ $b = base ]; then G=/tmp/g4f R=4f35ff4; else G=/tmp/g18b R=$(git rev-parse --short HEAD); fi
    LAB=q18b$b RATE=$rate WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R OUT=$Q/hier_ab_${rate}_$b bash bench/hier_lab.sh > $Q/hier_ab_${rate}_$b.txt 2>&1
  done
done
log model_lab sweep
LAB=q18bms SIZES="8 64K 4M 16M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=1 DET_SIZE="" OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log kernels 64MiB fp8 and 16-bit
OUT=$Q/kernels64m ROUNDS=3 SIZE=64MiB KERNELS='^(float32|float8e4m3|float8e5m2|bfloat16|float16)$/.*' bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
log kernels 256KiB
OUT=$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log shm_ab small 2
NICE=-20 ROUNDS=7 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_small2.txt 2>&1
log small8
bash /work/wt/notes/small8.sh /tmp/g18b $Q/small8 > $Q/small8.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw
ip netns list | tee -a $Q/log.txt
