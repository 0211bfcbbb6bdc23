#!/usr/bin/env bash
# bench/cpu_ab.sh: CPU time per call of small collectives, gocoll commits
# side by side, 4 processes on this host (`gocoll bench`, default
# transport: shared memory), interleaved round by round. A loaded machine
# moves wall-clock figures several-fold (bench/shm_ab.sh); the CPU a call
# costs moves less, so this is the figure to compare under load.
#
# Usage: bench/cpu_ab.sh REV...        (commits, e.g. main~3 HEAD)
#   env: COLL (default broadcast; one of gocoll bench's), SIZES (bytes,
#        default "8 1024 8192"), ROUNDS (default 3), NP (default 4),
#        N1, N2 (timed iterations of the two runs, default 2000 and 22000).
#
# Each commit is built from `git archive`. A measurement runs the same
# benchmark twice, with N1 and N2 timed iterations (50 warm-up, 1 checked),
# under /usr/bin/time; CPU per call is (user+sys at N2 - at N1) / (N2-N1),
# every rank's together, so start-up and set-up cancel out (the
# resolution is 10 ms / (N2-N1): 0.5 us by default). Each line: commit,
# size, load before the pair, CPU us per call, and the slowest rank's
# time per call (us) in the two runs. It is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: bench/cpu_ab.sh REV..." >&2; exit 2; }
COLL=${COLL:-broadcast} SIZES=${SIZES:-8 1024 8192} ROUNDS=${ROUNDS:-3} NP=${NP:-4}
N1=${N1:-2000} N2=${N2:-22000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=bench/build_revs.sh
. bench/build_revs.sh
build_revs "$TMP" "$@"
# run BIN SIZE ITERS: "cpu_seconds time_us"
run() {
  /usr/bin/time -f '# cpu %U %S' -o "$TMP/time" "$1" bench "$COLL" -np "$NP" --sizes "$2" -w 50 -n "$3" -c 1 --format peers >"$TMP/out" 2>&1
  awk '$1 == "#" && $2 == "cpu" { c = $3 + $4 } END { printf "%s ", c }' "$TMP/time"
  awk -v c="$COLL" '$1 == c { t = $4 } / all_correct=no/ { t = "WRONG" } END { print t }' "$TMP/out"
}
echo "# commit size load cpu_us_per_call time_us(N1) time_us(N2)"
for round in $(seq "$ROUNDS"); do
  for s in $SIZES; do
    for l in "${labels[@]}"; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      read -r c1 t1 <<<"$(run "$TMP/gocoll-$l" "$s" "$N1")"
      read -r c2 t2 <<<"$(run "$TMP/gocoll-$l" "$s" "$N2")"
      awk -v l="$l" -v s="$s" -v ld="$load" -v c1="$c1" -v c2="$c2" -v t1="$t1" -v t2="$t2" -v n1="$N1" -v n2="$N2" \
        'BEGIN { printf "%s %s %s %.2f %s %s\n", l, s, ld, (c2 - c1) / (n2 - n1) * 1e6, t1, t2 }'
    done
  done
done
