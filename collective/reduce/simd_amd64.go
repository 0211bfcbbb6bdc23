//go:build amd64 && !purego

package reduce

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/gocoll/gocoll/collective/dtype"
)

// The amd64 kernels are generated (internal/asmgen, with avo) into
// simd_amd64.s, simd_stubs_amd64.go and simd_table_amd64.go; a test fails
// if those differ from what the generator writes now.
//go:generate go run ./internal/asmgen/run -out .

// simdKernel is one generated function and the (data type, op) it serves.
type simdKernel struct {
	t   dtype.DataType
	op  Op
	vec func(dst, a, b *byte, n int)
}

// simdLevel is one instruction set's kernels, best first in simdLevels.
type simdLevel struct {
	name    string
	ok      bool // this CPU (and OS) has every instruction they use
	block   int  // the byte multiple the functions take
	kernels []simdKernel
}

func simdLevels() []simdLevel {
	c := &cpuid.CPU
	return []simdLevel{
		{"avx512", c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX2, cpuid.F16C), avx512Block, avx512Kernels},
		{"avx2", c.Supports(cpuid.AVX2, cpuid.F16C), avx2Block, avx2Kernels},
	}
}

// init makes the best level this CPU supports the active one.
func init() {
	for _, l := range simdLevels() {
		if l.ok {
			useLevel(l)
			return
		}
	}
}

// useLevel replaces the active kernels by the portable ones overridden
// with l's. It is called by init, and by tests to force a level.
func useLevel(l simdLevel) {
	active, level = portable, l.name
	for _, k := range l.kernels {
		override(k.t, k.op, vectorKernel(k.vec, l.block, portable[k.t][k.op]))
	}
}

// vectorKernel runs vec over the longest prefix that is a multiple of
// block bytes and the portable kernel tail over the rest, after the same
// length checks as the portable kernels. vec loads without alignment, so
// any alignment takes the vector path.
func vectorKernel(vec func(dst, a, b *byte, n int), block int, tail Kernel) Kernel {
	return func(dst, a, b []byte) {
		if len(a) != len(dst) || len(b) != len(dst) {
			tail(dst, a, b) // panics with the portable kernel's message
			return
		}
		n := len(dst) &^ (block - 1)
		if n > 0 {
			vec(&dst[0], &a[0], &b[0], n)
		}
		tail(dst[n:], a[n:], b[n:])
	}
}
