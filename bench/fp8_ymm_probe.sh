#!/usr/bin/env bash
# fp8_ymm_probe.sh: does the AVX-512 FP16 e4m3 sum kernel run faster on
# 256-bit (ymm, AVX512VL) registers than on zmm? It copies the generated
# sumFloat8E4M3AVX512FP16 from collective/reduce/simd_amd64.s as zsum and
# makes ysum from it: the same instructions on Y registers (32 bytes per
# body, so 128 bytes a loop), VADDPH's EVEX.L'L set to 01 (ymm) without the
# static rounding, which only 512-bit forms take (numerics aside, the same
# uops). It checks both give the same bytes on NaN-free random data, then
# times single 256 KiB calls, zsum and ysum alternated, 20000 each, and
# prints each one's best (the fastest call drops other processes'
# preemption out of a loaded machine).
#
#   bash bench/fp8_ymm_probe.sh [rounds]    # from the repository root
set -euo pipefail
rounds=${1:-3}
src=$(pwd)/collective/reduce/simd_amd64.s
dir=$(mktemp -d /tmp/fp8ymm_probe.XXXXXX)
trap 'rm -rf "$dir"' EXIT
body=$(awk '/^TEXT ·sumFloat8E4M3AVX512FP16/,/^GLOBL fp8bytesOfWords/' "$src")
{
	echo '#include "textflag.h"'
	echo "$body" | grep -v '^DATA\|^GLOBL' | sed 's/·sumFloat8E4M3AVX512FP16/·zsum/; s/^loop:/zloop:/; s/JB   loop/JB   zloop/'
	echo "$body" | grep -v '^DATA\|^GLOBL' | sed 's/·sumFloat8E4M3AVX512FP16/·ysum/; s/\bZ\([0-9]\+\)/Y\1/g;
		s/BYTE \$0x78; BYTE \$0x58/BYTE $0x28; BYTE $0x58/;
		s/\b64(\([A-Z]\)/32(\1/g; s/\b128(\([A-Z]\)/64(\1/g; s/\b192(\([A-Z]\)/96(\1/g;
		s/ADDQ \$0x00000100/ADDQ $0x00000080/; s/\bnan\([0-9]\)/ynan\1/g; s/\bdone\([0-9]\)/ydone\1/g;
		s/^loop:/yloop:/; s/JB   loop/JB   yloop/'
	echo "$body" | grep '^DATA\|^GLOBL'
} >"$dir/k_amd64.s"
grep -q 'BYTE $0x28; BYTE $0x58' "$dir/k_amd64.s" || { echo "probe: VADDPH encoding not found in $src" >&2; exit 1; }
printf 'module probe\n\ngo 1.26\n' >"$dir/go.mod"
cat >"$dir/k.go" <<'EOF'
package probe

//go:noescape
func zsum(dst, a, b *byte, n int)

//go:noescape
func ysum(dst, a, b *byte, n int)
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

func data() (d, a, b []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	d, a, b = make([]byte, size), make([]byte, size), make([]byte, size)
	for i := range a {
		a[i], b[i] = byte(r.IntN(256)), byte(r.IntN(256))
		if a[i]&0x7f == 0x7f { // no NaN: the fast path only
			a[i] = 0x11
		}
		if b[i]&0x7f == 0x7f {
			b[i] = 0x22
		}
	}
	return
}

func TestProbe(t *testing.T) {
	d, x, y := data()
	e := make([]byte, size)
	zsum(&d[0], &x[0], &y[0], size)
	ysum(&e[0], &x[0], &y[0], size)
	diff := 0
	for i := range d {
		if d[i] != e[i] {
			diff++
		}
	}
	if diff > size/100 { // ysum rounds to nearest, zsum toward zero
		t.Fatalf("%d of %d bytes differ", diff, size)
	}
	ks := []func(d, a, b *byte, n int){zsum, ysum}
	best := make([]time.Duration, len(ks))
	for range 20000 {
		for i, f := range ks {
			s := time.Now()
			f(&d[0], &x[0], &y[0], size)
			if e := time.Since(s); best[i] == 0 || e < best[i] {
				best[i] = e
			}
		}
	}
	gb := func(d time.Duration) float64 { return float64(size) / float64(d.Nanoseconds()) }
	fmt.Printf("zmm %.2f GB/s  ymm %.2f GB/s  ymm/zmm %.2f  (%d bytes differ)\n", gb(best[0]), gb(best[1]), gb(best[1])/gb(best[0]), diff)
}
EOF
(cd "$dir" && go vet . && go test -c -o probe.test .)
uptime
for _ in $(seq "$rounds"); do "$dir/probe.test" -test.run Probe | grep GB/s; done
