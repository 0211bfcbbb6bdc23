#!/usr/bin/env bash
# Session 24's end quiet window (after the helpers stopped). Run: bash quiet24.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q24e of main's head. BASE is the session's base ecbd4e2 with b6f6420 (the bench
# harness's end-of-loop wait) cherry-picked (branch q24base), so base and head are measured alike.
set -u
rm -rf /tmp/q24e && git clone -q /work/main /tmp/q24e && cd /tmp/q24e
git fetch -q /work/main q24base:q24base
Q=bench/results/$1
BASE=$(git rev-parse --short q24base)
mkdir -p $Q
cp /work/wt/notes/quiet24.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g24e ./cmd/gocoll
rm -rf /tmp/q24base && mkdir -p /tmp/q24base && git archive $BASE | tar -x -C /tmp/q24base && (cd /tmp/q24base && go build -o /tmp/g24base ./cmd/gocoll)
P=/work/shared/peers
V3=${V3:-GOCOLL_PATHS=12}
log "hier_lab A/B/C base vs HEAD vs HEAD with $V3, -w 5 -n 20, 200 Mbit/s, 2 rounds, order reversed in round 2"
for round in 1 2; do
  order="base head v3"; [ $round = 2 ] && order="v3 head base"
  for b in $order; do
    X=""
    case $b in base) G=/tmp/g24base R=$BASE ;; head) G=/tmp/g24e R=$HEAD ;; v3) G=/tmp/g24e R=$HEAD-v3 X=$V3 ;; esac
    LAB=q24e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R XENV="$X" OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "cpu_lab A/B hierarchical 16M"
for b in base head; do
  case $b in base) G=/tmp/g24base R=$BASE ;; head) G=/tmp/g24e R=$HEAD ;; esac
  LAB=q24c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring, 3 jobs (the 3-of-4-links state: how often)"
for j in 1 2 3; do
  LAB=q24ehl$j ALGOS=ring SIZES="4M 16M" GOCOLL=/tmp/g24e REV=$HEAD OUT=$Q/hier_lab_ring$j bash bench/hier_lab.sh > $Q/hier_lab_ring$j.txt 2>&1
done
log "hier_lab HEAD auto at 100 Mbit/s a path"
LAB=q24er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g24e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "model_lab sweep HEAD, 2 rounds"
LAB=q24ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=2 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "shm_ab per size with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log "kernels 256KiB"
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
