#!/usr/bin/env bash
# Session 29 end quiet window (after the helpers stopped). Run: bash quiet29.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q29e of main's head. BASE is the session's base 9d032dbe (branch q29base).
set -u
rm -rf /tmp/q29e && git clone -q /work/main /tmp/q29e && cd /tmp/q29e
git fetch -q /work/main q29base:q29base
Q=bench/results/$1
BASE=$(git rev-parse --short q29base)
mkdir -p $Q
cp /work/wt/notes/quiet29.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g29e ./cmd/gocoll
rm -rf /tmp/q29base && mkdir -p /tmp/q29base && git archive $BASE | tar -x -C /tmp/q29base && (cd /tmp/q29base && go build -o /tmp/g29base ./cmd/gocoll)
P=/work/shared/peers
log "hier_lab A/B/C base vs HEAD vs HEAD+ack29-x (GOCOLL_X_ACK_STREAM=1, /tmp/g29alt), -w 5 -n 20, 200 Mbit/s, 3 rounds, order alternating"
for round in 1 2 3; do
  order="base head coal"; [ $round = 2 ] && order="coal head base"
  for b in $order; do
    X=
    case $b in base) G=/tmp/g29base R=$BASE ;; head) G=/tmp/g29e R=$HEAD ;; coal) G=/tmp/g29alt R=$HEAD+ack29x X=GOCOLL_X_ACK_STREAM=1 ;; esac
    LAB=q29e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R XENV=$X OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "wan_floor ring8 (the WAN bytes alone) base vs HEAD, 2 rounds each"
for b in base head; do
  case $b in base) G=/tmp/g29base ;; head) G=/tmp/g29e ;; esac
  LAB=q29f$b MODES=ring8 ROUNDS=2 ITERS=10 GOCOLL=$G OUT=$Q/wan_floor_$b bash bench/wan_floor.sh > $Q/wan_floor_$b.txt 2>&1
done
log "cpu_lab A/B hierarchical 16M"
for b in base head coal; do
  X=
  case $b in base) G=/tmp/g29base R=$BASE ;; head) G=/tmp/g29e R=$HEAD ;; coal) G=/tmp/g29alt R=$HEAD+ack29x X=GOCOLL_X_ACK_STREAM=1 ;; esac
  LAB=q29c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R XENV=$X OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring, 2 jobs (the 3-of-4-links state: how often)"
for j in 1 2; do
  LAB=q29ehl$j ALGOS=ring SIZES="4M 16M" GOCOLL=/tmp/g29e REV=$HEAD OUT=$Q/hier_lab_ring$j bash bench/hier_lab.sh > $Q/hier_lab_ring$j.txt 2>&1
done
log "hier_lab HEAD auto at 100 Mbit/s a path"
LAB=q29er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g29e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "wan_trace + split, HEAD, 16 MiB hierarchical, SCHED=1"
SCHED=1 BIN_MS=2 SIZE=16777216 ITERS=3 LAB=q29wt GOCOLL=/tmp/g29e OUT=$Q/wan_trace bash bench/wan_trace.sh > $Q/wan_trace.txt 2>&1
log "model_lab sweep HEAD, 2 rounds"
LAB=q29ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=2 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "shm_ab per size with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log "shm_ab Broadcast with --fresh (new data every call) HEAD vs the peer"
NICE=-20 ROUNDS=5 FRESH=1 COLLS=broadcast SIZES="65536 262144 1048576" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_fresh.txt 2>&1
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log "kernels 256KiB"
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log "kernels 64MiB"
OUT=$PWD/$Q/kernels64m ROUNDS=1 SIZE=64MiB bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
log "dtype_ab 16 MiB float bf16 half, base vs HEAD"
NICE=-20 ROUNDS=3 bash bench/dtype_ab.sh $BASE HEAD > $Q/dtype_ab.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
