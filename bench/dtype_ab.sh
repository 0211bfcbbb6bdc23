#!/usr/bin/env bash
# bench/dtype_ab.sh: AllReduce busbw of the 16-bit (and any other) data
# types against float32's for the same bytes, interleaved round by round so
# that every data type sees the same load (issue 17's target: bf16 and fp16
# at 16 MiB at least 0.9x float32's busbw, 4 ranks on this host).
#
# Usage: bench/dtype_ab.sh REV...        (commits, e.g. HEAD~1 HEAD)
#   env: ROUNDS (default 5), NP (ranks, default 4), SIZE (bytes, default
#        16777216), DTYPES (default "float bf16 half"; the first is the
#        reference of the ratios), ITERS (timed calls, default 20), WARMUP
#        (default 2), NICE (default 0; e.g. -20 as root on a loaded host:
#        each run then gets an autogroup session of its own with that
#        niceness, as bench/shm_ab.sh does).
#
# A round runs, for each commit, `gocoll bench allreduce -np NP -b SIZE -e
# SIZE -d T -n ITERS -w WARMUP` for every T of DTYPES in turn (the default
# transport: shared memory). The end prints one line per commit, data type
# and placement (out of place, in place): the median busbw (GB/s), the
# median over rounds of its ratio to the first data type's busbw in the
# same round, and every round's busbw. Each commit is built from `git
# archive` (bench/build_revs.sh). It is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: bench/dtype_ab.sh REV..." >&2; exit 2; }
ROUNDS=${ROUNDS:-5} NP=${NP:-4} SIZE=${SIZE:-16777216} DTYPES=${DTYPES:-float bf16 half}
ITERS=${ITERS:-20} WARMUP=${WARMUP:-2} NICE=${NICE:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=bench/build_revs.sh
. bench/build_revs.sh
build_revs "$TMP" "$@"
niced() {
  if [[ $NICE != 0 && $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) == 1 ]]; then
    setsid bash -c 'n=$1; shift; echo "$n" >/proc/$$/autogroup && exec nice -n "$n" "$@"' niced "$NICE" "$@"
  else
    nice -n "$NICE" "$@"
  fi
}
rows=$TMP/rows
for round in $(seq "$ROUNDS"); do
  echo "# round $round: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T)"
  for l in "${labels[@]}"; do
    for t in $DTYPES; do
      # The result line: size count type redop root, then time algbw busbw
      # #wrong out of place and the same in place.
      niced "$TMP/gocoll-$l" bench allreduce -np "$NP" -b "$SIZE" -e "$SIZE" -d "$t" -n "$ITERS" -w "$WARMUP" 2>&1 |
        awk -v l="$l" -v t="$t" -v r="$round" -v s="$SIZE" '
          $1 == s && NF >= 13 { print r, l, t, "out", $8; print r, l, t, "in", $12; if ($9 + $13 > 0) print "# " l " " t ": WRONG VALUES" > "/dev/stderr" }' >>"$rows"
    done
  done
done
ref=${DTYPES%% *}
echo "# label dtype place median_busbw_GBs median_ratio_to_$ref rounds..."
awk -v ref="$ref" '
  function median(s,   n, x, i, j, t) {
    n = split(substr(s, 2), x, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
    return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
  }
  { bw[$1, $2, $3, $4] = $5; k = $2 " " $3 " " $4; v[k] = v[k] " " $5; seen[k] = 1; rounds[$1] = 1 }
  END {
    for (k in seen) {
      split(k, f, " "); rs = ""
      for (r in rounds) if ((r, f[1], ref, f[3]) in bw && bw[r, f[1], ref, f[3]] > 0 && (r, f[1], f[2], f[3]) in bw)
        rs = rs " " bw[r, f[1], f[2], f[3]] / bw[r, f[1], ref, f[3]]
      printf "%-9s %-8s %-4s %8.3f %6s  %s\n", f[1], f[2], f[3], median(v[k]), rs == "" ? "-" : sprintf("%.2f", median(rs)), v[k]
    }
  }' "$rows" | sort -k1,1 -k3,3 -k2,2
