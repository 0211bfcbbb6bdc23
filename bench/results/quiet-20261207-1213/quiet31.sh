#!/usr/bin/env bash
# Session 31 end quiet window (after the helpers stopped). Run: bash quiet31.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q31e of main's head. BASE is the session's base 6b972dd8 (branch q31base).
set -u
rm -rf /tmp/q31e && git clone -q /work/main /tmp/q31e && cd /tmp/q31e
git fetch -q /work/main q31base:q31base
Q=bench/results/$1
BASE=$(git rev-parse --short q31base)
mkdir -p $Q
cp /work/wt/notes/quiet31.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g31e ./cmd/gocoll
rm -rf /tmp/q31base && mkdir -p /tmp/q31base && git archive $BASE | tar -x -C /tmp/q31base && (cd /tmp/q31base && go build -o /tmp/g31base ./cmd/gocoll)
P=/work/shared/peers
ALT_BIN=${ALT_BIN:-} ALT_X=${ALT_X:-} ALT_NAME=${ALT_NAME:-alt}
ARMS="base head"; [ -n "$ALT_BIN" ] && ARMS="base head coal"
log "hier_lab A/B(/C) base vs HEAD (vs $ALT_NAME: $ALT_BIN $ALT_X), -w 5 -n 20, 200 Mbit/s, 3 rounds, order alternating"
for round in 1 2 3; do
  order="$ARMS"; [ $round = 2 ] && order=$(echo $ARMS | tr ' ' '\n' | tac | tr '\n' ' ')
  for b in $order; do
    X=
    case $b in base) G=/tmp/g31base R=$BASE ;; head) G=/tmp/g31e R=$HEAD ;; coal) G=$ALT_BIN R=$HEAD+$ALT_NAME X=$ALT_X ;; esac
    LAB=q31e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R XENV=$X OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "hier_floor (bare UDP, the hierarchical's whole traffic), gso and plain, 2 rounds"
LAB=q31hf ROUNDS=2 CALLS=10 MODES="gso plain" ONLYS="mem,lan,wan" OUT=$Q/hier_floor bash bench/hier_floor.sh > $Q/hier_floor.txt 2>&1
log "wan_floor ring8 (the WAN bytes alone) base vs HEAD, 2 rounds each"
for b in base head; do
  case $b in base) G=/tmp/g31base ;; head) G=/tmp/g31e ;; esac
  LAB=q31f$b MODES=ring8 ROUNDS=2 ITERS=10 GOCOLL=$G OUT=$Q/wan_floor_$b bash bench/wan_floor.sh > $Q/wan_floor_$b.txt 2>&1
done
log "cpu_lab A/B hierarchical 16M"
for b in $ARMS; do
  X=
  case $b in base) G=/tmp/g31base R=$BASE ;; head) G=/tmp/g31e R=$HEAD ;; coal) G=$ALT_BIN R=$HEAD+$ALT_NAME X=$ALT_X ;; esac
  LAB=q31c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R XENV=$X OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring, 2 jobs (the 3-of-4-links state: how often)"
for j in 1 2; do
  LAB=q31ehl$j ALGOS=ring SIZES="4M 16M" GOCOLL=/tmp/g31e REV=$HEAD OUT=$Q/hier_lab_ring$j bash bench/hier_lab.sh > $Q/hier_lab_ring$j.txt 2>&1
done
log "hier_lab HEAD auto at 100 Mbit/s a path"
LAB=q31er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g31e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "wan_trace + split, HEAD, 16 MiB hierarchical, SCHED=1"
SCHED=1 BIN_MS=2 SIZE=16777216 ITERS=3 LAB=q31wt GOCOLL=/tmp/g31e OUT=$Q/wan_trace bash bench/wan_trace.sh > $Q/wan_trace.txt 2>&1
log "model_lab sweep HEAD, 2 rounds"
LAB=q31ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=2 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
probe() { [ -x /tmp/a2a31/pvm/memb.test ] && echo "# $(date +%T) load=$(cut -d' ' -f1 /proc/loadavg) xcore_ns,xcoreNT_ns=$(setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 "$@"' x /tmp/a2a31/pvm/memb.test -test.bench 'Xcore$|XcoreNT' -test.count 1 -test.benchtime 20000x 2>&1 | awk '/Bench/{printf "%s ", $3}')" >> $Q/placement.txt; }
log "shm_ab per size with the peer"
probe
NICE=-20 ROUNDS=5 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh $BASE HEAD > $Q/shm_ab.txt 2>&1
probe
log "shm_ab sweep"
NICE=-20 ROUNDS=5 SWEEP=1 COLLS=allreduce,broadcast,alltoall SIZES="8 1024 8192 65536 262144 1048576 16777216 67108864" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_sweep.txt 2>&1
probe
log "shm_ab Broadcast with --fresh (new data every call) HEAD vs the peer"
NICE=-20 ROUNDS=5 FRESH=1 COLLS=broadcast SIZES="65536 262144 1048576" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_fresh.txt 2>&1
log "shm_ab AllToAll with --fresh HEAD vs the peer"
probe
NICE=-20 ROUNDS=5 FRESH=1 COLLS=alltoall SIZES="65536 262144 1048576" PEERS_DIR=$P bash bench/shm_ab.sh HEAD > $Q/shm_ab_fresh_a2a.txt 2>&1
probe
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log "kernels 256KiB"
OUT=$PWD/$Q/kernels256 ROUNDS=2 SIZE=256KiB bash bench/kernels_ab.sh > $Q/kernels256.txt 2>&1
log "kernels 64MiB"
OUT=$PWD/$Q/kernels64m ROUNDS=2 SIZE=64MiB bash bench/kernels_ab.sh > $Q/kernels64m.txt 2>&1
log "fp8 complete floors (kern31), 16 KiB with CHECK and 256 KiB"
CHECK=1 ISA=avx2 SIZE=16384 CALLS=400 ROUNDS=20 bash bench/fp8_bound.sh > $Q/fp8_bound16k.txt 2>&1
ISA=avx2 SIZE=262144 CALLS=50 ROUNDS=20 bash bench/fp8_bound.sh > $Q/fp8_bound256k.txt 2>&1
log "fp8 64 MiB base vs head, interleaved (kernel_probe)"
SIZE=67108864 ROUNDS=10 bash bench/kernel_probe.sh $BASE sumFloat32AVX2 sumFloat8E5M2AVX2 prodFloat8E5M2AVX2 sumFloat8E4M3AVX2 prodFloat8E4M3AVX2 > $Q/fp8_probe64m.txt 2>&1
log "dtype_ab 16 MiB float bf16 half, base vs HEAD"
NICE=-20 ROUNDS=3 bash bench/dtype_ab.sh $BASE HEAD > $Q/dtype_ab.txt 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
