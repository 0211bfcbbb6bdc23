#!/usr/bin/env bash
# Session 23's end quiet window (after the helpers stopped). Run: bash quiet23.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q23e of main's head.
set -u
rm -rf /tmp/q23e && git clone -q /work/main /tmp/q23e && cd /tmp/q23e
Q=bench/results/$1
BASE=dc14656
mkdir -p $Q
cp /work/wt/notes/quiet23.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g23e ./cmd/gocoll
rm -rf /tmp/q23base && mkdir -p /tmp/q23base && git archive $BASE | tar -x -C /tmp/q23base && (cd /tmp/q23base && go build -o /tmp/g23base ./cmd/gocoll)
rm -rf /tmp/q23nocrowd && mkdir -p /tmp/q23nocrowd && git archive HEAD | tar -x -C /tmp/q23nocrowd && sed -i 's/\t\tp.Crowded = 1.5/\t\tp.Crowded = -1/' /tmp/q23nocrowd/transport/metaroce/mrtransport/repick.go && grep -q 'p.Crowded = -1' /tmp/q23nocrowd/transport/metaroce/mrtransport/repick.go && (cd /tmp/q23nocrowd && go build -o /tmp/g23nocrowd ./cmd/gocoll)
rm -rf /tmp/q23nojoint && mkdir -p /tmp/q23nojoint && git archive HEAD | tar -x -C /tmp/q23nojoint && sed -i 's/\tif len(js) < 2 {/\tif len(js) < 99 {/' /tmp/q23nojoint/transport/route/route.go && grep -q 'len(js) < 99' /tmp/q23nojoint/transport/route/route.go && (cd /tmp/q23nojoint && go build -o /tmp/g23nojoint ./cmd/gocoll)
P=/work/shared/peers
log "hier_lab A/B/C/D base vs HEAD vs HEAD without the crowded re-pick vs HEAD without joint spins, -w 5 -n 20, 200 Mbit/s, 2 rounds, order reversed in round 2"
for round in 1 2; do
  order="base head nocrowd nojoint"; [ $round = 2 ] && order="nojoint nocrowd head base"
  for b in $order; do
    case $b in base) G=/tmp/g23base R=$BASE ;; head) G=/tmp/g23e R=$HEAD ;; nocrowd) G=/tmp/g23nocrowd R=$HEAD-nocrowd ;; nojoint) G=/tmp/g23nojoint R=$HEAD-nojoint ;; esac
    LAB=q23e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "cpu_lab A/B/D hierarchical 16M"
for b in base head nojoint; do
  case $b in base) G=/tmp/g23base R=$BASE ;; head) G=/tmp/g23e R=$HEAD ;; nojoint) G=/tmp/g23nojoint R=$HEAD-nojoint ;; esac
  LAB=q23c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring"
LAB=q23ehl ALGOS=ring GOCOLL=/tmp/g23e REV=$HEAD OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log "hier_lab HEAD auto at 100 Mbit/s a path (the split: is the 200 Mbit/s figure the cores'?)"
LAB=q23er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g23e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "model_lab sweep HEAD"
LAB=q23ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=1 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "shm_ab per size, 8 KiB with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log "kernels 256KiB"
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
