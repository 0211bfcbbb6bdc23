//go:build amd64 && !purego

package reduce

import "github.com/gocoll/gocoll/collective/dtype"

// pairTableVec adapts a generated fp8 kernel, which takes the table of all
// pairs of (t, op) as its last argument, to simdKernel's signature.
func pairTableVec(t dtype.DataType, op Op, f func(dst, a, b *byte, n int, tab *byte)) func(dst, a, b *byte, n int) {
	return func(dst, a, b *byte, n int) { f(dst, a, b, n, &pairTableFor(t, op)[0]) }
}
