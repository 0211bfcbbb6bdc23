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
# (avx512fp16, avx512, avx2; default the start-up choice). Writes
# $OUT/membw.txt, $OUT/kernels.txt and prints a summary (bench/kernels_ab.py
# is not needed: awk below).
set -eu
OUT=${OUT:-/tmp/kernels_ab}
ROUNDS=${ROUNDS:-2}
SIZE=${SIZE:-64MiB}
LEVEL=${LEVEL:-}
PEERS=${PEERS_DIR:-/work/shared/peers}
mkdir -p "$OUT"
bytes=67108864 reps=20 bt=20x
if [ "$SIZE" = 256KiB ]; then bytes=262144 reps=2000 bt=2000x; fi
gcc -O3 -march=native "$PEERS/membw.c" -o "$OUT/membw"
go test -c -o "$OUT/reduce.test" ./collective/reduce/
: > "$OUT/membw.txt"
: > "$OUT/kernels.txt"
lvl=()
if [ -n "$LEVEL" ]; then lvl=(-kernel-level "$LEVEL"); fi
for r in $(seq "$ROUNDS"); do
	echo "## round $r load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/membw.txt" >> "$OUT/kernels.txt"
	"$OUT/membw" -s $bytes -r $reps >> "$OUT/membw.txt" 2>&1
	"$OUT/reduce.test" -test.run XXX -test.bench "^BenchmarkKernel\$/.*/.*/$SIZE\$" -test.benchtime $bt "${lvl[@]}" >> "$OUT/kernels.txt" 2>&1
	"$OUT/membw" -s $bytes -r $reps >> "$OUT/membw.txt" 2>&1
done
# Summary: the lowest C reduce figure of the sitting and each kernel's best
# over the rounds, with its ratio to that C figure and to float32 Sum's.
awk -v size="$SIZE" '
	FNR == NR { if ($1 == "reduce") { c = (c == "" || $5 < c) ? $5 : c }; next }
	/best-GB\/s/ { n = $1; sub(/-[0-9]+$/, "", n); sub(/^BenchmarkKernel\//, "", n)
		for (i = 1; i < NF; i++) if ($(i+1) == "best-GB/s") v = $i
		if (!(n in best) || v > best[n]) best[n] = v; order[n] = ++k }
	END {
		f = best["float32/sum/" size]
		printf "C reduce (lowest of the sitting) %s GB/s; float32 sum %s GB/s\n", c, f
		for (n in best) printf "%-28s %7.2f  %.2fx C  %.2fx f32sum\n", n, best[n], best[n] / c, best[n] / f | "sort"
	}' "$OUT/membw.txt" "$OUT/kernels.txt"
