#!/usr/bin/env bash
# Session 25's second, short window (after round 2's helpers stopped). Run: bash quiet25b.sh DIR (under
# bench/results/) from a pinned clone /tmp/q25f of main's head. BASE: main after the first window (dd6c056,
# branch q25b), so only round 2's landings differ.
set -u
rm -rf /tmp/q25f && git clone -q /work/main /tmp/q25f && cd /tmp/q25f
git fetch -q /work/main q25b:q25b
Q=bench/results/$1
BASE=$(git rev-parse --short q25b)
mkdir -p $Q
cp /work/wt/notes/quiet25b.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g25f ./cmd/gocoll
rm -rf /tmp/q25bb && mkdir -p /tmp/q25bb && git archive $BASE | tar -x -C /tmp/q25bb && (cd /tmp/q25bb && go build -o /tmp/g25bb ./cmd/gocoll)
P=/work/shared/peers
if [ "${LAB_AB:-1}" = 1 ]; then
log "hier_lab A/B base vs HEAD, -w 5 -n 20, 200 Mbit/s, 2 rounds, order alternating"
for round in 1 2; do
  order="base head"; [ $round = 2 ] && order="head base"
  for b in $order; do
    case $b in base) G=/tmp/g25bb R=$BASE ;; head) G=/tmp/g25f R=$HEAD ;; esac
    LAB=q25f$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "wan_trace + split, HEAD, 16 MiB hierarchical, SCHED=1"
SCHED=1 BIN_MS=2 SIZE=16777216 ITERS=3 LAB=q25fwt GOCOLL=/tmp/g25f OUT=$Q/wan_trace bash bench/wan_trace.sh > $Q/wan_trace.txt 2>&1
fi
if [ "${SHM_AB:-1}" = 1 ]; then
log "shm_ab AllReduce per size with the peer"
NICE=-20 ROUNDS=5 COLLS=allreduce SIZES="65536 131072 262144 1048576" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
log "shm_ab AllReduce sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
fi
log done
ip netns list | tee -a $Q/log.txt
