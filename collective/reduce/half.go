package reduce

import "github.com/gocoll/gocoll/collective/dtype"

// The 16-bit float kernels widen each element to float32 (exact), combine
// there and round once to nearest even. For sum and prod this is the exactly
// rounded result: float32 carries more than twice the 16-bit formats'
// precision plus two bits, so rounding twice equals rounding once (see
// bfloat16Prod for float32's subnormal range).
// The loops are written out per type: a generic loop over both uint16-shaped
// types would call the conversions through a dictionary, not inline them.

func bfloat16Kernels() [numOps]Kernel {
	return [numOps]Kernel{
		Sum: typed(func(dst, a, b []dtype.BFloat16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x + y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.BFloat16FromFloat32(r)
			}
		}),
		Prod: typed(bfloat16Prod),
		Min: typed(func(dst, a, b []dtype.BFloat16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.BFloat16FromFloat32(min(a[i].Float32(), b[i].Float32()))
			}
		}),
		Max: typed(func(dst, a, b []dtype.BFloat16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.BFloat16FromFloat32(max(a[i].Float32(), b[i].Float32()))
			}
		}),
	}
}

// bfloat16Prod needs no special case where float32 products are subnormal:
// a product of two 8-bit significands has at most 16 significant bits, so
// float32 rounds it only when it lies below 2^-134, half the smallest
// bfloat16 subnormal, and it then stays below that (65535 is no product of
// two 8-bit numbers) and becomes a zero of the right sign as it should.
func bfloat16Prod(dst, a, b []dtype.BFloat16) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		x, y := a[i].Float32(), b[i].Float32()
		r := x * y
		if r != r {
			r = firstNaN(r, x, y)
		}
		dst[i] = dtype.BFloat16FromFloat32(r)
	}
}

func float16Kernels() [numOps]Kernel {
	return [numOps]Kernel{
		Sum: typed(func(dst, a, b []dtype.Float16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x + y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float16FromFloat32(r)
			}
		}),
		// Products of two 11-bit significands are exact in float32, and
		// never subnormal there (at least 2^-48).
		Prod: typed(func(dst, a, b []dtype.Float16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x * y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float16FromFloat32(r)
			}
		}),
		Min: typed(func(dst, a, b []dtype.Float16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float16FromFloat32(min(a[i].Float32(), b[i].Float32()))
			}
		}),
		Max: typed(func(dst, a, b []dtype.Float16) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float16FromFloat32(max(a[i].Float32(), b[i].Float32()))
			}
		}),
	}
}

// firstNaN returns r, the sum or product of x and y, unless r is a NaN
// while x or y is one: then x if it is a NaN, else y. The hardware's
// choice between two NaN operands (x86 takes its first source) depends on
// the operand order the compiler picks for a commutative operation, which
// differs between builds (the race detector's, for one); this makes the
// result a function of the inputs, which the vector kernels reproduce
// (with a as the first source). The 16-bit rounding quiets the NaN.
//
//go:noinline
func firstNaN(r, x, y float32) float32 {
	if r == r {
		return r
	}
	if x != x {
		return x
	}
	if y != y {
		return y
	}
	return r // Inf - Inf, 0 * Inf: the hardware's default NaN
}
