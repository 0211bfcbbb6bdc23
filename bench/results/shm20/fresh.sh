#!/usr/bin/env bash
# bench/results/shm20/fresh.sh: the first 200 calls of a fresh 4-rank 64 KiB
# Broadcast job against its later calls, with and without a busy prelude
# (shm20, session 20; bench/results/shm_large.md "Session 20, shm20").
#
# Usage: bench/results/shm20/fresh.sh [REV]     (default HEAD)
#   env: ROUNDS (default 6), NICE (default -20: each job in an autogroup
#        session of its own at that niceness, as bench/shm_ab.sh), SYSMON
#        (default 0; 1: also count, with perf record, the nanosleep system
#        calls of every thread, the Go runtime's monitor (sysmon) being the
#        only caller in a rank, during the first 200 timed calls).
#
# It builds REV's cmd/gocoll with inst.patch (next to this script: per rank
# the time of every timed call, getrusage at marks; INST_SPIN=D spins D
# before the warm-ups, INST_SLEEP=D sleeps D after that) and runs, round by
# round, `gocoll bench broadcast -np 4 --sizes 65536 -w 20 -n 1600 -c 0`
# plain, with INST_SPIN=20ms, and with INST_SPIN=20ms INST_SLEEP=1ms,
# printing rank 0's (the root's) summary: calls 0-200 and 400-1599, their
# mean, how many took over 50 us and what those add to the mean, and the
# mean of the others. Not run by the tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
REV=${1:-HEAD} ROUNDS=${ROUNDS:-6} NICE=${NICE:--20} SYSMON=${SYSMON:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
git archive "$REV" | tar -x -C "$TMP"
(cd "$TMP" && patch -p1 -s <"$here/inst.patch" && go build -o "$TMP/gocoll-inst" ./cmd/gocoll)
niced() { setsid bash -c 'n=$1; shift; echo "$n" >/proc/$$/autogroup && exec nice -n "$n" "$@"' niced "$NICE" "$@"; }
one() { # label env...
  local l=$1 out
  shift
  if ((SYSMON)); then
    out=$(niced perf record -q -k CLOCK_MONOTONIC -e raw_syscalls:sys_enter -o "$TMP/sc.data" env "$@" "$TMP/gocoll-inst" bench broadcast -np 4 --sizes 65536 -w 20 -n 1600 -c 0 --format peers 2>&1)
  else
    out=$(niced env "$@" "$TMP/gocoll-inst" bench broadcast -np 4 --sizes 65536 -w 20 -n 1600 -c 0 --format peers 2>&1)
  fi
  grep "HIST rank 0:" <<<"$out" | sed "s/ slow.*//; s/.*HIST rank 0:/$l/; s/ >200us[^;]*;/;/g"
  if ((SYSMON)); then
    # The loop's start (CLOCK_MONOTONIC) and the mean of calls 0-200 give
    # the first 200 calls' window.
    read -r t0 m <<<"$(grep "INST rank 0 " <<<"$out" | sed 's/.*\[0-25 wall [0-9.]*.*mono \([0-9.]*\) .*/\1/' | head -1) $(grep "HIST rank 0:" <<<"$out" | sed 's/.*\[0-200 mean \([0-9.]*\).*/\1/')"
    perf script -i "$TMP/sc.data" -F time,trace 2>/dev/null |
      awk -v t0="$t0" -v t1="$(awk -v t="$t0" -v m="$m" 'BEGIN { printf "%.6f", t + 200 * m / 1e6 }')" -v l="$l" '
        { t = $1 + 0 } $3 == 35 && t >= t0 && t < t1 { n++ }
        END { printf "%s: nanosleep calls (all ranks) in the first 200 calls: %d\n", l, n }'
  fi
}
for r in $(seq "$ROUNDS"); do
  echo "# round $r: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T)"
  one plain X=1
  one spin20 INST_SPIN=20ms
  one spin20sleep1 INST_SPIN=20ms INST_SLEEP=1ms
done
