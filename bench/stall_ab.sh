#!/usr/bin/env bash
# bench/stall_ab.sh: does a job over MetaRoCE survive one rank's process
# being stopped for a while (a loaded host leaving it unscheduled)?
#
#   bash bench/stall_ab.sh BASE NEW     (commits; run from the top directory)
#
# For each round and each commit, in turn: a local job of NP ranks
# (collcheck -mode loop: AllReduce of COUNT floats, sums checked, ROUNDS
# calls) over MetaRoCE on loopback; once every rank loops, after LEAD
# seconds, rank 1 gets SIGSTOP, and SIGCONT STOP seconds later. The job
# either completes (exit 0) or fails (a rank names rank 1 with
# PeerTimeout). Prints one line per job and a count per commit. The
# default PeerTimeout is 2 s; STOP near it shows how much of it a stopped
# peer may take. Load counts (wall-clock scheduling), so give it.
set -euo pipefail
BASE=${1:?base commit}
NEW=${2:?new commit}
ROUNDS_AB=${ROUNDS_AB:-5}
NP=${NP:-3}
STOP=${STOP:-1.9}
LEAD=${LEAD:-1}
COUNT=${COUNT:-65536}
CALLS=${CALLS:-4000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { # commit -> dir with gocoll and collcheck
  local l d
  l=$(git rev-parse --short "$1")
  d=$work/$l
  mkdir -p "$d/src"
  git archive "$1" | tar -x -C "$d/src"
  (cd "$d/src" && go build -o "$d/gocoll" ./cmd/gocoll && go build -o "$d/collcheck" ./cmd/gocoll/internal/collcheck)
  echo "$l"
}
labels=("$(build "$BASE")" "$(build "$NEW")")
declare -A ok=() runs=()
for r in $(seq "$ROUNDS_AB"); do
  for l in "${labels[@]}"; do
    d=$work/$l
    out=$work/out.$l.$r
    t0=$(date +%s.%N)
    "$d/gocoll" run -np "$NP" -x GOCOLL_TRANSPORT=metaroce -- \
      "$d/collcheck" -mode loop -count "$COUNT" -rounds "$CALLS" -deadline 2m >"$out" 2>&1 &
    job=$!
    pid=""
    for _ in $(seq 600); do # up to 60 s for the ranks to loop
      pid=$(sed -n 's/^\[rank 1\] looping pid=\([0-9]*\)$/\1/p' "$out" | head -1)
      [ "$(grep -c 'looping pid=' "$out" || true)" -ge "$NP" ] && [ -n "$pid" ] && break
      sleep 0.1
    done
    sleep "$LEAD"
    kill -STOP "$pid"
    sleep "$STOP"
    kill -CONT "$pid"
    t1=$(date +%s.%N)
    code=0
    wait "$job" || code=$?
    runs[$l]=$(( ${runs[$l]:-0} + 1 ))
    [ "$code" = 0 ] && ok[$l]=$(( ${ok[$l]:-0} + 1 ))
    why=$(grep -o 'stopped answering[^"]*for [0-9.]*m\?s' "$out" | head -1 || true)
    t2=$(date +%s.%N)
    echo "round $r $l stop ${STOP}s exit $code job $(echo "$t2 - $t0" | bc)s, after SIGCONT $(echo "$t2 - $t1" | bc)s load $(cut -d' ' -f1 /proc/loadavg) ${why}"
  done
done
for l in "${labels[@]}"; do
  echo "$l: ${ok[$l]:-0} of ${runs[$l]} jobs completed (stop ${STOP}s, np $NP)"
done
