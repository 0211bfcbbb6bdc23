#!/usr/bin/env bash
# Session 22's end quiet window (after the helpers stopped). Run: bash quiet22.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q22e of main's head.
set -u
rm -rf /tmp/q22e && git clone -q /work/main /tmp/q22e && cd /tmp/q22e
Q=bench/results/$1
BASE=b94db90
mkdir -p $Q
cp /work/wt/notes/quiet22.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g22e ./cmd/gocoll
rm -rf /tmp/q22base && mkdir -p /tmp/q22base && git archive $BASE | tar -x -C /tmp/q22base && (cd /tmp/q22base && go build -o /tmp/g22base ./cmd/gocoll)
rm -rf /tmp/q22noroom && mkdir -p /tmp/q22noroom && git archive HEAD | tar -x -C /tmp/q22noroom && sed -i 's/c.Core.AckRoom = !c.NoAckRoom/c.Core.AckRoom = false/' /tmp/q22noroom/transport/metaroce/mrtransport/config.go && grep -q 'c.Core.AckRoom = false' /tmp/q22noroom/transport/metaroce/mrtransport/config.go && (cd /tmp/q22noroom && go build -o /tmp/g22noroom ./cmd/gocoll)
P=/work/shared/peers
log "hier_lab A/B/C base vs HEAD vs HEAD without AckRoom, -w 5 -n 20, 200 Mbit/s, 2 rounds, order reversed in round 2"
for round in 1 2; do
  order="base head noroom"; [ $round = 2 ] && order="noroom head base"
  for b in $order; do
    case $b in base) G=/tmp/g22base R=$BASE ;; head) G=/tmp/g22e R=$HEAD ;; noroom) G=/tmp/g22noroom R=$HEAD-noroom ;; esac
    LAB=q22e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "cpu_lab A/B hierarchical 16M"
for b in base head; do
  if [ $b = base ]; then G=/tmp/g22base R=$BASE; else G=/tmp/g22e R=$HEAD; fi
  LAB=q22c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring"
LAB=q22ehl ALGOS=ring GOCOLL=/tmp/g22e REV=$HEAD OUT=$Q/hier_lab bash bench/hier_lab.sh > $Q/hier_lab.txt 2>&1
log "hier_lab HEAD auto at 100 Mbit/s a path (the split: is the 200 Mbit/s figure the cores'?)"
LAB=q22er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g22e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "model_lab sweep HEAD"
LAB=q22ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=1 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "shm_ab per size, 8 KiB with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log "kernels 64MiB and 256KiB"
OUT=$PWD/$Q/kernels64m ROUNDS=3 SIZE=64MiB BASE=$BASE KERNELS='^(float32|float8e4m3|float8e5m2|bfloat16|float16)$/.*' bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
