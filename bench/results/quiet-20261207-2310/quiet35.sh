#!/usr/bin/env bash
# Session 35 end quiet window (issue 14; base ceb59c66 = session 34 end, head = session 35 main). Run: bash quiet35.sh DIR (DIR under bench/results/)
# from a pinned clone /tmp/q35e of main's head. BASE is the session's base ceb59c66 (branch q35base).
set -u
rm -rf /tmp/q35e && git clone -q /work/main /tmp/q35e && cd /tmp/q35e
git fetch -q /work/main q35base:q35base
Q=bench/results/$1
BASE=$(git rev-parse --short q35base)
mkdir -p $Q
cp /work/wt/notes/quiet35.sh $Q/
log() { echo "== $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a $Q/log.txt; }
HEAD=$(git rev-parse --short HEAD)
log start $HEAD base $BASE
go build -o /tmp/g35e ./cmd/gocoll
rm -rf /tmp/q35base && mkdir -p /tmp/q35base && git archive $BASE | tar -x -C /tmp/q35base && (cd /tmp/q35base && go build -o /tmp/g35base ./cmd/gocoll)
P=/work/shared/peers
ALT_BIN=${ALT_BIN:-} ALT_X=${ALT_X:-} ALT_NAME=${ALT_NAME:-alt}
ARMS="head"; [ -n "$ALT_BIN" ] && ARMS="head coal"  # session 35: no transport or algorithm change, main alone on the new machine
log "hier_lab HEAD (A/B vs ALT if set) (vs $ALT_NAME: $ALT_BIN $ALT_X), -w 5 -n 20, 200 Mbit/s, 4 rounds, order alternating"
for round in 1 2 3 4; do
  order="$ARMS"; [ $((round % 2)) = 0 ] && order=$(echo $ARMS | tr ' ' '\n' | tac | tr '\n' ' ')
  for b in $order; do
    X=
    case $b in base) G=/tmp/g35base R=$BASE ;; head) G=/tmp/g35e R=$HEAD ;; coal) G=$ALT_BIN R=$HEAD+$ALT_NAME X=$ALT_X ;; esac
    LAB=q35e$b RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$R XENV=$X OUT=$Q/hier_ab_${round}_$b bash bench/hier_lab.sh > $Q/hier_ab_${round}_$b.txt 2>&1
  done
done
log "hier_floor (bare UDP, the hierarchical's whole traffic), gso, LAN 7 / WAN 2, plain; 3 rounds; then gso with 16 pieces, 16M, 3 rounds"
LAB=q35hf ROUNDS=3 CALLS=10 MODES="gso gso-l7w2 plain" ONLYS="mem,lan,wan" OUT=$Q/hier_floor bash bench/hier_floor.sh > $Q/hier_floor.txt 2>&1
LAB=q35hg ROUNDS=3 CALLS=10 MODES="gso" SIZES="16M" PIECES=16 ONLYS="mem,lan,wan" OUT=$Q/hier_floor_p16 bash bench/hier_floor.sh > $Q/hier_floor_p16.txt 2>&1
log "wan_floor ring8 (the WAN bytes alone) HEAD, 2 rounds"
for b in head; do
  case $b in base) G=/tmp/g35base ;; head) G=/tmp/g35e ;; esac
  LAB=q35f$b MODES=ring8 ROUNDS=2 ITERS=10 GOCOLL=$G OUT=$Q/wan_floor_$b bash bench/wan_floor.sh > $Q/wan_floor_$b.txt 2>&1
done
log "cpu_lab A/B hierarchical 16M"
for b in $ARMS; do
  X=
  case $b in base) G=/tmp/g35base R=$BASE ;; head) G=/tmp/g35e R=$HEAD ;; coal) G=$ALT_BIN R=$HEAD+$ALT_NAME X=$ALT_X ;; esac
  LAB=q35c$b SIZES="16M" ALGOS="hierarchical" SPIN=default ITERS=8 GOCOLL=$G REV=$R XENV=$X OUT=$Q/cpu_lab_$b bash bench/cpu_lab.sh > $Q/cpu_lab_$b.txt 2>&1
done
log "hier_lab HEAD ring, 2 jobs (the 3-of-4-links state: how often)"
for j in 1 2; do
  LAB=q35ehl$j ALGOS=ring SIZES="4M 16M" GOCOLL=/tmp/g35e REV=$HEAD OUT=$Q/hier_lab_ring$j bash bench/hier_lab.sh > $Q/hier_lab_ring$j.txt 2>&1
done
log "hier_lab HEAD auto at 100 Mbit/s a path"
LAB=q35er RATE=100 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=/tmp/g35e REV=$HEAD OUT=$Q/hier_lab_100 bash bench/hier_lab.sh > $Q/hier_lab_100.txt 2>&1
log "wan_trace + split, HEAD, 16 MiB hierarchical, SCHED=1"
SCHED=1 BIN_MS=2 SIZE=16777216 ITERS=3 LAB=q35wt GOCOLL=/tmp/g35e OUT=$Q/wan_trace bash bench/wan_trace.sh > $Q/wan_trace.txt 2>&1
log "model_lab sweep HEAD, 2 rounds"
LAB=q35ems SIZES="8 64K 4M 256M" ALGOS="hierarchical ring tree auto" ROUNDS=2 DET_SIZE=64M DET_ROUNDS=2 OUT=$Q/model_sweep bash bench/model_lab.sh > $Q/model_sweep.txt 2>&1
log "gocoll sim 1024 ranks (sim.sh's cell), wall time"
( s0=$(date +%s); /tmp/g35e sim --sites 4 --hosts-per-site 32 --ranks-per-host 8 --wan-delay 5ms --wan-paths 8 --algo all allreduce 64M; echo "wall $(( $(date +%s) - s0 )) s, $(nproc) cores" ) > $Q/sim1024.txt 2>&1
log "Deterministic 64 MiB on 4 local ranks"
ROUNDS=5 OUT=$PWD/$Q/deterministic.txt bash bench/deterministic.sh > $Q/deterministic.log 2>&1
log done
rm -f $Q/*/reduce.test $Q/*/membw $Q/*/base.test
ip netns list | tee -a $Q/log.txt
