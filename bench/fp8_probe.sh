#!/usr/bin/env bash
# fp8_probe.sh: two questions about the AVX-512 FP16 e4m3 sum kernel
# (sumFloat8E4M3AVX512FP16 in collective/reduce/simd_amd64.s), answered on
# copies of its generated assembly:
#   zmm   the kernel as generated;
#   ymm   the same instructions on Y registers (AVX512VL; 32 bytes a body,
#         128 a loop), VADDPH's EVEX.L'L set to 01 without the static
#         rounding, which only 512-bit forms take (numerics aside, the same
#         uops, KORTESTD for 32-byte masks): does 256-bit on three ports
#         beat 512-bit on two?
#   nonan zmm without its fast path's NaN test (masked VPCMPUB chain,
#         KORTEST, branch): what the test costs, the bound of any cut there.
# It checks ymm and nonan give zmm's bytes on NaN-free random data, then
# times single 256 KiB calls, the kernels alternated, 20000 each, and
# prints each one's best (the fastest call drops other processes'
# preemption out of a loaded machine).
#
#   bash bench/fp8_probe.sh [rounds]    # from the repository root
set -euo pipefail
rounds=${1:-3}
src=$(pwd)/collective/reduce/simd_amd64.s
dir=$(mktemp -d /tmp/fp8probe.XXXXXX)
trap 'rm -rf "$dir"' EXIT
body=$(awk '/^TEXT ·sumFloat8E4M3AVX512FP16/,/^GLOBL fp8bytesOfWords/' "$src" | grep -v '^DATA\|^GLOBL')
rename() { sed "s/·sumFloat8E4M3AVX512FP16/·$1/; s/\b\(loop\|nan[0-9]\+\|done[0-9]\+\)\b/$1\1/g"; }
{
	echo '#include "textflag.h"'
	echo "$body" | rename zmm
	echo "$body" | rename ymm | sed 's/\bZ\([0-9]\+\)/Y\1/g;
		s/BYTE \$0x7\([08]\); BYTE \$0x58/BYTE $0x2\1; BYTE $0x58/;
		s/\b64(\([A-Z]\)/32(\1/g; s/\b128(\([A-Z]\)/64(\1/g; s/\b192(\([A-Z]\)/96(\1/g;
		s/ADDQ \$0x00000100/ADDQ $0x00000080/; s/KORTESTQ/KORTESTD/'
	# The fast path's NaN test: VPANDD and VPCMPUB $0x04 before the block's
	# KORTESTQ and JCC (the out-of-line blends, after RET, stay).
	echo "$body" | rename nonan | awk '/RET/{tail=1} tail || !/^\t(VPANDD  |VPCMPUB +\$0x04|KORTESTQ|JCC)/'
	awk '/^TEXT ·sumFloat8E4M3AVX512FP16/,/^GLOBL fp8bytesOfWords/' "$src" | grep '^DATA\|^GLOBL'
} >"$dir/k_amd64.s"
# Every VADDPH of ymm has L'L = 01 and no rounding (P2 0x20 or 0x28).
[ "$(awk '/TEXT ·ymm/,/RET/' "$dir/k_amd64.s" | grep -c 'BYTE $0x2[08]; BYTE $0x58')" = 8 ] &&
	! awk '/TEXT ·ymm/,/RET/' "$dir/k_amd64.s" | grep -q 'BYTE $0x7[08]; BYTE $0x58' ||
	{ echo "probe: VADDPH encodings not as expected in $src" >&2; exit 1; }
[ "$(awk '/TEXT ·nonan/,/RET/' "$dir/k_amd64.s" | grep -c 'KORTESTQ')" = 0 ] || { echo "probe: NaN test not removed" >&2; exit 1; }
printf 'module probe\n\ngo 1.26\n' >"$dir/go.mod"
cat >"$dir/k.go" <<'EOF'
package probe

//go:noescape
func zmm(dst, a, b *byte, n int)

//go:noescape
func ymm(dst, a, b *byte, n int)

//go:noescape
func nonan(dst, a, b *byte, n int)
EOF
cat >"$dir/k_test.go" <<'EOF'
package probe

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

const size = 256 << 10

func TestProbe(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]byte, size), make([]byte, size)
	for i := range x {
		x[i], y[i] = byte(r.IntN(256)), byte(r.IntN(256))
		if x[i]&0x7f == 0x7f { // no NaN: the fast path only
			x[i] = 0x11
		}
		if y[i]&0x7f == 0x7f {
			y[i] = 0x22
		}
	}
	ks := []func(d, a, b *byte, n int){zmm, ymm, nonan}
	names := []string{"zmm", "ymm", "nonan"}
	want := make([]byte, size)
	zmm(&want[0], &x[0], &y[0], size)
	d := make([]byte, size)
	for i, k := range ks {
		k(&d[0], &x[0], &y[0], size)
		diff := 0
		for j := range d {
			if d[j] != want[j] {
				diff++
			}
		}
		if diff > size/100 { // ymm rounds to nearest, zmm toward zero
			t.Fatalf("%s: %d of %d bytes differ from zmm", names[i], diff, size)
		}
	}
	best := make([]time.Duration, len(ks))
	for range 20000 {
		for i, k := range ks {
			s := time.Now()
			k(&d[0], &x[0], &y[0], size)
			if e := time.Since(s); best[i] == 0 || e < best[i] {
				best[i] = e
			}
		}
	}
	gb := func(d time.Duration) float64 { return float64(size) / float64(d.Nanoseconds()) }
	for i := range ks {
		fmt.Printf("%s %.2f GB/s (%.2fx)  ", names[i], gb(best[i]), gb(best[i])/gb(best[0]))
	}
	fmt.Println()
}
EOF
(cd "$dir" && go vet . && go test -c -o probe.test .)
uptime
for _ in $(seq "$rounds"); do "$dir/probe.test" -test.run Probe | grep GB/s; done
