#!/usr/bin/env bash
# kernel_probe.sh: A/B of generated amd64 kernels measured in thread CPU
# time, which a loaded machine's preemption does not inflate (memory shared
# with other work still does, equally for A and B). Each kernel named is
# copied from the simd_amd64.s of commit BASE (as base_K) and of the work
# tree (as new_K; only new_K if BASE has no K) into one test binary that calls all of them in turn, one
# call each per round (CALLS calls, the first untimed, for sizes that stay
# in cache), in place on its own accumulator (acc = acc op in, in
# alternating between two random NaN-free fp8-safe inputs), and prints per
# function the best and median GB/s of wall and thread CPU time.
#
#   SIZE=67108864 ROUNDS=15 bash bench/kernel_probe.sh BASE sumFloat32AVX512 sumFloat8E4M3AVX512FP16 ...
#   SIZE=262144 CALLS=50 ROUNDS=40 bash bench/kernel_probe.sh BASE ...
#
# Memory: (number of kernels x 2 + 2) x SIZE bytes. From the repository root.
set -euo pipefail
base=$1
shift
dir=$(mktemp -d /tmp/kernelprobe.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/src" # the copies' sources, outside the probe's package
git show "$base:collective/reduce/simd_amd64.s" >"$dir/src/base.s"
cp collective/reduce/simd_amd64.s "$dir/src/new.s"
# extract FILE NAME PREFIX: the function NAME of FILE renamed PREFIX_NAME
# (labels are local to a TEXT block in Go assembly), without its data.
extract() {
	awk -v name="$2" -v pre="$3" '
		/^TEXT / { on = index($0, "TEXT ·" name "(SB)") == 1; if (on) sub("·" name, "·" pre "_" name) }
		on && !/^(DATA|GLOBL)/' "$1"
}
# fns: PREFIX_NAME of every copy (a kernel BASE lacks is only new_).
fns=()
for k in "$@"; do
	if grep -q "^TEXT ·$k(SB)" "$dir/src/base.s"; then fns+=("base_$k"); fi
	fns+=("new_$k")
done
{
	echo '#include "textflag.h"'
	for f in "${fns[@]}"; do
		extract "$dir/src/${f%%_*}.s" "${f#*_}" "${f%%_*}"
	done
	grep -h '^DATA\|^GLOBL' "$dir/src/new.s" "$dir/src/base.s" | awk '!seen[$0]++'
} >"$dir/k_amd64.s"
printf 'module probe\n\ngo 1.26\n' >"$dir/go.mod"
{
	echo 'package probe'
	for f in "${fns[@]}"; do
		printf '\n//go:noescape\nfunc %s(dst, a, b *byte, n int)\n' "$f"
	done
	echo 'var funcs = []struct {'
	echo '	name string'
	echo '	f    func(dst, a, b *byte, n int)'
	echo '}{'
	for f in "${fns[@]}"; do printf '\t{"%s", %s},\n' "$f" "$f"; done
	echo '}'
} >"$dir/k.go"
cat >"$dir/k_test.go" <<'EOF'
package probe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestProbe(t *testing.T) {
	size, rounds, calls := env("SIZE", 64<<20), env("ROUNDS", 15), env("CALLS", 1)
	r := rand.New(rand.NewPCG(1, 2))
	var in [2][]byte
	for j := range in {
		in[j] = make([]byte, size)
		for i := range in[j] {
			x := byte(r.IntN(256))
			if x&0x7f >= 0x7c { // no fp8 NaN or Inf: the fast paths
				x = 0x11
			}
			in[j][i] = x
		}
	}
	accs := make([][]byte, len(funcs))
	for i := range accs {
		accs[i] = slices.Clone(in[1])
	}
	wall := make([][]time.Duration, len(funcs))
	cpu := make([][]time.Duration, len(funcs))
	runtime.LockOSThread()
	for rd := range rounds + 1 { // round 0 faults the pages in
		for i, f := range funcs {
			acc, b := accs[i], in[rd&1]
			for k := range calls {
				c, s := threadCPU(), time.Now()
				f.f(&acc[0], &acc[0], &b[0], size)
				if rd > 0 && (k > 0 || calls == 1) {
					wall[i] = append(wall[i], time.Since(s))
					cpu[i] = append(cpu[i], threadCPU()-c)
				}
			}
		}
	}
	gb := func(d time.Duration) float64 { return float64(size) / d.Seconds() / 1e9 }
	for i, f := range funcs {
		slices.Sort(wall[i])
		slices.Sort(cpu[i])
		fmt.Printf("%-36s wall best %6.2f median %6.2f | cpu best %6.2f median %6.2f GB/s\n", f.name,
			gb(wall[i][0]), gb(wall[i][len(wall[i])/2]), gb(cpu[i][0]), gb(cpu[i][len(cpu[i])/2]))
	}
}

func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0) // CLOCK_THREAD_CPUTIME_ID
	return time.Duration(ts.Nano())
}
EOF
(cd "$dir" && gofmt -w . && go vet . && go test -c -o probe.test .)
echo "# base $base, new = work tree; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$dir/probe.test" -test.run Probe | grep GB/s
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
