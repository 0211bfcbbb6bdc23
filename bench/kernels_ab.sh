#!/usr/bin/env bash
# kernels_ab.sh: issue 17's kernel targets in one sitting. C membw (the
# peers' reference: best GB/s of `reduce`, a += b on float32) runs before
# and after every round of BenchmarkKernel, so each kernel figure has C
# figures measured minutes around it; ROUNDS rounds interleave the two.
#
#   OUT=dir ROUNDS=2 SIZE=64MiB bash bench/kernels_ab.sh
#
# SIZE is 64MiB (against 0.8x C reduce at 64 MiB) or 256KiB (against 0.5x
# float32 Sum's figure in the same run). LEVEL forces a kernel level
# (avx512fp16, avx512gfni, avx512, avx2; default the start-up choice). KERNELS restricts
# the kernels to a sub-benchmark pattern "dtype/op" (Go's -bench syntax, e.g.
# '^(float32|float8e4m3|float8e5m2)$/.*'; float32 Sum must be among them for
# the 256 KiB ratio). BASE=<commit> also builds that commit's kernels (in a
# temporary worktree) and runs them before the current ones in every round:
# an A/B in one sitting. Writes $OUT/membw.txt, $OUT/kernels.txt
# ($OUT/kernels_base.txt) and prints a summary of each (awk below).
set -eu
OUT=${OUT:-/tmp/kernels_ab}
ROUNDS=${ROUNDS:-2}
SIZE=${SIZE:-64MiB}
LEVEL=${LEVEL:-}
KERNELS=${KERNELS:-.*/.*}
BASE=${BASE:-}
PEERS=${PEERS_DIR:-/work/shared/peers}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd) # absolute: the BASE build runs in another directory
bytes=67108864 reps=20 bt=20x
if [ "$SIZE" = 256KiB ]; then bytes=262144 reps=2000 bt=2000x; fi
gcc -O3 -march=native "$PEERS/membw.c" -o "$OUT/membw"
go test -c -o "$OUT/reduce.test" ./collective/reduce/
: > "$OUT/membw.txt"
: > "$OUT/kernels.txt"
bins=(reduce)
if [ -n "$BASE" ]; then
	wt=$(mktemp -d /tmp/kernels_ab_base.XXXXXX)
	git worktree add -q --detach "$wt" "$BASE"
	(cd "$wt" && go test -c -o "$OUT/base.test" ./collective/reduce/)
	git worktree remove --force "$wt"
	: > "$OUT/kernels_base.txt"
	bins=(base reduce)
fi
lvl=()
if [ -n "$LEVEL" ]; then lvl=(-kernel-level "$LEVEL"); fi
for r in $(seq "$ROUNDS"); do
	echo "## round $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/membw.txt"
	"$OUT/membw" -s $bytes -r $reps >> "$OUT/membw.txt" 2>&1
	for b in "${bins[@]}"; do
		f=$OUT/kernels.txt
		if [ "$b" = base ]; then f=$OUT/kernels_base.txt; fi
		echo "## round $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$f"
		"$OUT/$b.test" -test.run XXX -test.bench "^BenchmarkKernel\$/$KERNELS/$SIZE\$" -test.benchtime $bt "${lvl[@]}" >> "$f" 2>&1
	done
	"$OUT/membw" -s $bytes -r $reps >> "$OUT/membw.txt" 2>&1
done
# Summary: the lowest C reduce figure of the sitting and each kernel's best
# over the rounds, with its ratio to that C figure and to float32 Sum's.
summary() {
	awk -v size="$SIZE" '
	FNR == NR { if ($1 == "reduce") { c = (c == "" || $5 < c) ? $5 : c }; next }
	/best-GB\/s/ { n = $1; sub(/-[0-9]+$/, "", n); sub(/^BenchmarkKernel\//, "", n)
		for (i = 1; i < NF; i++) if ($(i+1) == "best-GB/s") v = $i
		if (!(n in best) || v > best[n]) best[n] = v; order[n] = ++k }
	END {
		f = best["float32/sum/" size]
		printf "C reduce (lowest of the sitting) %s GB/s; float32 sum %s GB/s\n", c, f
		for (n in best) {
			r = "-"
			if (f > 0) r = sprintf("%.2f", best[n] / f)
			printf "%-28s %7.2f  %.2fx C  %sx f32sum\n", n, best[n], best[n] / c, r | "sort"
		}
	}' "$OUT/membw.txt" "$1"
}
if [ -n "$BASE" ]; then
	echo "# base $BASE"
	summary "$OUT/kernels_base.txt"
	echo "# current $(git rev-parse --short HEAD)"
fi
summary "$OUT/kernels.txt"
