#!/usr/bin/env bash
# Session 21's end quiet window (after the helpers stopped). Run: bash quiet21.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q21e of main's head.
set -u
rm -rf /tmp/q21e && git clone -q /work/main /tmp/q21e && cd /tmp/q21e
Q=bench/results/$1
BASE=d4036a9
mkdir -p $Q
cp /work/wt/notes/quiet21.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g21e ./cmd/gocoll
rm -rf /tmp/q21base && mkdir -p /tmp/q21base && git archive $BASE | tar -x -C /tmp/q21base && (cd /tmp/q21base && go build -o /tmp/g21base ./cmd/gocoll)
P=/work/shared/peers
log "hier_lab A/B base vs HEAD, -w 5 -n 20, 200 Mbit/s, 2 rounds, order swapped in round 2"
for round in 1 2; do
  order="base head"; [ $round = 2 ] && order="head base"
  for b in $order; do
    if [ $b = base ]; then G=/tmp/g21base R=$BASE; else G=/tmp/g21e R=$HEAD; fi
    LAB=q21e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "cpu_lab A/B hierarchical 16M"
for b in base head; do
  if [ $b = base ]; then G=/tmp/g21base R=$BASE; else G=/tmp/g21e R=$HEAD; fi
  LAB=q21c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring"
LAB=q21ehl ALGOS=ring GOCOLL=/tmp/g21e REV=$HEAD OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log "model_lab sweep HEAD"
LAB=q21ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=1 DET_SIZE="" OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "shm_ab per size, 8 KiB with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log "dtype_ab 16 MiB"
NICE=-20 ROUNDS=5 bash bench/dtype_ab.sh $BASE HEAD > $Q/dtype_ab.txt 2>&1
log "BoardBroadcast same/new data: base (bench file copied in) vs HEAD, 2 rounds"
cp collective/boardbroadcast_bench_test.go /tmp/q21base/collective/
for round in 1 2; do
  for b in base head; do
    if [ $b = base ]; then D=/tmp/q21base; else D=$PWD; fi
    (cd $D && go test -run '^$' -bench 'BoardBroadcast' -count 3 ./collective/) > $Q/boardbcast_${round}_$b.txt 2>&1
  done
done
log "kernels 64MiB and 256KiB"
OUT=$PWD/$Q/kernels64m ROUNDS=3 SIZE=64MiB BASE=$BASE KERNELS='^(float32|float8e4m3|float8e5m2|bfloat16|float16)$/.*' bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
