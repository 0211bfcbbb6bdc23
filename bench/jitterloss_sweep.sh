#!/usr/bin/env bash
# bench/jitterloss_sweep.sh: TestFigureJitterLoss's first row (5 % random
# loss, 0-4 ms per-packet jitter each way, no reordering; 8 paths 2 a link
# over 4 links of 200 Mbit/s, 2 ms one way, 20 ms queues, 4 x 4 MiB in
# flight) over many seeds, in virtual time: the goodput of seconds 1-8 as %
# of capacity per seed, then the mean, the minimum and the seeds under the
# test's 85 % floor. EXTRA_US moves the links' delay by that many µs (a
# timing change only: a fragile tail shows on other seeds); ROW picks
# another of the test's rows by index (jitterLossRows: 3 and 4 are the 1 and
# 0.5 ms tick rows). It runs TestJitterLossSweep (JITTERLOSS_* settings);
# about 1.5 s of CPU a seed.
#
# Usage: bench/jitterloss_sweep.sh [FIRST LAST]   (default: 1 60)
#   env: EXTRA_US (default 0), ROW (default 0)
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST=${1:-1}
LAST=${2:-60}
EXTRA_US=${EXTRA_US:-0}
ROW=${ROW:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go test -c -o "$TMP/mr.test" ./transport/metaroce
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg) row $ROW seeds $FIRST-$LAST +${EXTRA_US}us"
(cd transport/metaroce && JITTERLOSS_SEEDS=$FIRST-$LAST JITTERLOSS_ROW=$ROW JITTERLOSS_EXTRA_US=$EXTRA_US "$TMP/mr.test" -test.run '^TestJitterLossSweep$') |
	grep '^jitterloss' | tee "$TMP/out" 
awk '{n++; s+=$5; if (n==1 || $5<m) m=$5; if ($5<85) b=b" "$3"("$5")"} END {printf "# n=%d mean %.2f%% min %.1f%% under 85%%:%s\n", n, s/n, m, (b==""?" none":b)}' "$TMP/out"
