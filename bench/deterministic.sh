#!/usr/bin/env bash
# bench/deterministic.sh: what Config.Deterministic costs (issue 14 item 6's
# target): a 64 MiB float32 AllReduce on 4 local ranks (shared memory),
# default against GOCOLL_DETERMINISTIC=1, interleaved ROUNDS times.
# On one host the default already runs the direct algorithm; Deterministic
# runs it too, each segment's owner folding the ranks' parts in rank order.
#
# Usage: bench/deterministic.sh    env: ROUNDS (default 5), OUT (default
# bench/results/deterministic/raw/DATE.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-bench/results/deterministic/raw/$(date -u +%Y%m%d-%H%M).txt}
mkdir -p "$(dirname "$OUT")"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/gocoll" ./cmd/gocoll
{
	echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load: $(cat /proc/loadavg)"
	for i in $(seq "$ROUNDS"); do
		for mode in default det; do
			echo "## round $i mode $mode"
			if [ "$mode" = det ]; then export GOCOLL_DETERMINISTIC=1; else unset GOCOLL_DETERMINISTIC; fi
			nice "$BIN/gocoll" bench allreduce -b 64M -e 64M -n 10 -w 2 -np 4 2>&1 | grep -vE '^\[rank'
		done
	done
	echo "# $(date -u +%FT%TZ) load: $(cat /proc/loadavg)"
} | tee "$OUT"
