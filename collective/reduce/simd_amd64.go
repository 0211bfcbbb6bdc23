//go:build amd64 && !purego

package reduce

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/gocoll/gocoll/collective/dtype"
)

// AVX2 kernels (simd_amd64.s) for the reductions whose vector instruction
// gives exactly the scalar result: IEEE addition and multiplication are
// the same operation per lane as in Go's scalar code, and integer addition
// wraps alike. Min and Max stay portable: VMINPS and VMAXPS treat NaN and
// -0 differently from Go's min and max.

//go:noescape
func sumFloat32AVX2(dst, a, b *byte, n int)

//go:noescape
func prodFloat32AVX2(dst, a, b *byte, n int)

//go:noescape
func sumFloat64AVX2(dst, a, b *byte, n int)

//go:noescape
func prodFloat64AVX2(dst, a, b *byte, n int)

//go:noescape
func sumInt32AVX2(dst, a, b *byte, n int)

//go:noescape
func sumInt64AVX2(dst, a, b *byte, n int)

func init() {
	if !cpuid.CPU.Supports(cpuid.AVX2) {
		return
	}
	for _, k := range []struct {
		t   dtype.DataType
		op  Op
		vec func(dst, a, b *byte, n int)
	}{
		{dtype.Float32, Sum, sumFloat32AVX2},
		{dtype.Float32, Prod, prodFloat32AVX2},
		{dtype.Float64, Sum, sumFloat64AVX2},
		{dtype.Float64, Prod, prodFloat64AVX2},
		{dtype.Int32, Sum, sumInt32AVX2},
		{dtype.Uint32, Sum, sumInt32AVX2},
		{dtype.Int64, Sum, sumInt64AVX2},
		{dtype.Uint64, Sum, sumInt64AVX2},
	} {
		override(k.t, k.op, vectorKernel(k.vec, portable[k.t][k.op]))
	}
}

// vectorKernel runs vec over the longest prefix that is a multiple of 128
// bytes and the portable kernel tail over the rest, after the same length
// checks as the portable kernels.
func vectorKernel(vec func(dst, a, b *byte, n int), tail Kernel) Kernel {
	return func(dst, a, b []byte) {
		if len(a) != len(dst) || len(b) != len(dst) {
			tail(dst, a, b) // panics with the portable kernel's message
			return
		}
		n := len(dst) &^ 127
		if n > 0 {
			vec(&dst[0], &a[0], &b[0], n)
		}
		tail(dst[n:], a[n:], b[n:])
	}
}
