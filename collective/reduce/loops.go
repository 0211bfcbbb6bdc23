package reduce

import (
	"encoding/binary"
	"math"
)

// number is the set of element types reduced with Go's own arithmetic.
type number interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// numberKernels returns the Sum, Prod, Min and Max kernels of T.
func numberKernels[T number]() [numOps]Kernel {
	return [numOps]Kernel{
		Sum:  typed(sumLoop[T]),
		Prod: typed(prodLoop[T]),
		Min:  typed(minLoop[T]),
		Max:  typed(maxLoop[T]),
	}
}

// floatKernels returns numberKernels with Sum and Prod whose NaN results
// do not depend on the compiler's operand order (see firstNaN).
func floatKernels() (f32, f64 [numOps]Kernel) {
	f32, f64 = numberKernels[float32](), numberKernels[float64]()
	f32[Sum] = typed(func(dst, a, b []float32) {
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			r := a[i] + b[i]
			if r != r {
				r = quietFirstNaN32(r, a[i], b[i])
			}
			dst[i] = r
		}
	})
	f32[Prod] = typed(func(dst, a, b []float32) {
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			r := a[i] * b[i]
			if r != r {
				r = quietFirstNaN32(r, a[i], b[i])
			}
			dst[i] = r
		}
	})
	f64[Sum] = typed(func(dst, a, b []float64) {
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			r := a[i] + b[i]
			if r != r {
				r = quietFirstNaN64(r, a[i], b[i])
			}
			dst[i] = r
		}
	})
	f64[Prod] = typed(func(dst, a, b []float64) {
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			r := a[i] * b[i]
			if r != r {
				r = quietFirstNaN64(r, a[i], b[i])
			}
			dst[i] = r
		}
	})
	return f32, f64
}

// quietFirstNaN32 is firstNaN with the NaN quieted, as x86 returns it
// (out of line: the loops call it only for NaN results).
//
//go:noinline
func quietFirstNaN32(r, x, y float32) float32 {
	return math.Float32frombits(math.Float32bits(firstNaN(r, x, y)) | 1<<22)
}

//go:noinline
func quietFirstNaN64(r, x, y float64) float64 {
	n := r
	if x != x {
		n = x
	} else if y != y {
		n = y
	}
	return math.Float64frombits(math.Float64bits(n) | 1<<51)
}

// The loops below reslice a and b to len(dst) so the compiler drops the
// bounds checks, and read both inputs of an element before writing it, so
// dst may be a or b. Unrolling the float32 sum loop by 4 or 8 by hand (with
// subslices or unsafe pointers) measured no faster on the development
// machine (the Go compiler does not vectorise, and the scalar loop is
// already about one element per cycle), so they stay plain; SIMD kernels
// are the way to more speed (see override).

func sumLoop[T number](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func prodLoop[T number](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// minLoop and maxLoop use Go's builtin min and max, which for floats
// propagate NaN and order -0 below +0 (on amd64 they compile to branch-free
// MINSS/MAXSS pairs).
func minLoop[T number](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = min(a[i], b[i])
	}
}

func maxLoop[T number](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = max(a[i], b[i])
	}
}

// sumBytes adds 8-bit integers (signed or not: wrapping addition is the
// same) eight at a time in a uint64 (SWAR): the low 7 bits of each byte are
// added with the carries kept inside the byte, and the top bits are put
// back with XOR, which drops the carry out of each byte.
func sumBytes(d, x, y []byte) {
	const top = 0x8080808080808080
	x, y = x[:len(d)], y[:len(d)]
	i := 0
	for ; i+8 <= len(d); i += 8 {
		u, v := binary.LittleEndian.Uint64(x[i:]), binary.LittleEndian.Uint64(y[i:])
		binary.LittleEndian.PutUint64(d[i:], (u&^top+v&^top)^(u^v)&top)
	}
	for ; i < len(d); i++ {
		d[i] = x[i] + y[i]
	}
}

// minSmall and maxSmall are min and max for 8-bit integers without a
// branch: the compiler turns the builtin into a compare and jump for them,
// which mispredicts on random data. The difference of two 8-bit values
// fits an int64, and its sign spread over all bits (d>>63) selects.
func minSmall[T ~int8 | ~uint8](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		x, y := int64(a[i]), int64(b[i])
		d := x - y
		dst[i] = T(y + d&(d>>63))
	}
}

func maxSmall[T ~int8 | ~uint8](dst, a, b []T) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		x, y := int64(a[i]), int64(b[i])
		d := x - y
		dst[i] = T(x - d&(d>>63))
	}
}
