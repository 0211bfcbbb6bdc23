//go:build (amd64 || arm64) && !purego

package reduce

import "github.com/gocoll/gocoll/collective/dtype"

// The architecture-specific kernels: each architecture's simd_GOARCH.go
// lists its levels (simdLevels, best first), generated assembly supplies
// the functions, and the code below makes the best supported level active.

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
