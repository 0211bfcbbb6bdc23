package reduce

import (
	"sync"

	"github.com/gocoll/gocoll/collective/dtype"
)

// The fp8 kernels widen each element to float32 through the 256-entry
// tables of dtype (exact), combine there and round once to nearest even
// with dtype's conversions. Sums and products of two fp8 values are exact
// in float32 (4- and 3-bit significands over exponents within 2^±16; no
// product is subnormal there), so the result is the exactly rounded one.
// E4M3 has no infinities: a result beyond its largest finite value, ±448,
// saturates to ±448 (as CUDA's __NV_SATFINITE conversions NCCL's fp8
// reductions use); E5M2 overflows to ±Inf as IEEE formats do. A NaN sum or
// product is a's NaN if a is one, else b's (see firstNaN), quieted.
// Min and Max follow Go's min and max: NaN propagates, -0 is below +0.
// The loops are written out per type, as for the 16-bit floats; the
// kernels run them once, over every pair, into lookup tables.

func float8E4M3Kernels() [numOps]Kernel { return pairTableKernels(dtype.Float8E4M3Type) }

func float8E5M2Kernels() [numOps]Kernel { return pairTableKernels(dtype.Float8E5M2Type) }

// pairTableKernels returns the kernels of an 8-bit float type, which look
// each result up in a table of all 256x256 input pairs (pairTableFor;
// rounding through float64 arithmetic per element is two orders of
// magnitude slower).
func pairTableKernels(t dtype.DataType) [numOps]Kernel {
	var out [numOps]Kernel
	for _, op := range []Op{Sum, Prod, Min, Max} {
		out[op] = typed(func(dst, a, b []uint8) {
			tab := pairTableFor(t, op)
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = tab[uint16(a[i])<<8|uint16(b[i])]
			}
		})
	}
	return out
}

// pairTab holds x op y at x<<8|y.
type pairTab = [1 << 16]uint8

var pairTables [2][numOps]struct {
	once sync.Once
	tab  *pairTab
}

// pairTableFor returns the table of (t, op), t an fp8 type, building it on
// first use from the element loops.
func pairTableFor(t dtype.DataType, op Op) *pairTab {
	k, loops := 0, float8E4M3Loops
	if t == dtype.Float8E5M2Type {
		k, loops = 1, float8E5M2Loops
	}
	e := &pairTables[k][op]
	e.once.Do(func() { e.tab = pairTable(loops()[op]) })
	return e.tab
}

// pairTable runs loop over every pair: entry x<<8|y is x op y.
func pairTable(loop Kernel) *pairTab {
	var x, y [1 << 16]uint8
	for i := range x {
		x[i], y[i] = uint8(i>>8), uint8(i)
	}
	tab := new(pairTab)
	loop(tab[:], x[:], y[:])
	return tab
}

func float8E4M3Loops() [numOps]Kernel {
	return [numOps]Kernel{
		Sum: typed(func(dst, a, b []dtype.Float8E4M3) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x + y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float8E4M3FromFloat32(r)
			}
		}),
		Prod: typed(func(dst, a, b []dtype.Float8E4M3) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x * y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float8E4M3FromFloat32(r)
			}
		}),
		Min: typed(func(dst, a, b []dtype.Float8E4M3) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float8E4M3FromFloat32(min(a[i].Float32(), b[i].Float32()))
			}
		}),
		Max: typed(func(dst, a, b []dtype.Float8E4M3) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float8E4M3FromFloat32(max(a[i].Float32(), b[i].Float32()))
			}
		}),
	}
}

func float8E5M2Loops() [numOps]Kernel {
	return [numOps]Kernel{
		Sum: typed(func(dst, a, b []dtype.Float8E5M2) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x + y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float8E5M2FromFloat32(r)
			}
		}),
		Prod: typed(func(dst, a, b []dtype.Float8E5M2) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				x, y := a[i].Float32(), b[i].Float32()
				r := x * y
				if r != r {
					r = firstNaN(r, x, y)
				}
				dst[i] = dtype.Float8E5M2FromFloat32(r)
			}
		}),
		Min: typed(func(dst, a, b []dtype.Float8E5M2) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float8E5M2FromFloat32(min(a[i].Float32(), b[i].Float32()))
			}
		}),
		Max: typed(func(dst, a, b []dtype.Float8E5M2) {
			a, b = a[:len(dst)], b[:len(dst)]
			for i := range dst {
				dst[i] = dtype.Float8E5M2FromFloat32(max(a[i].Float32(), b[i].Float32()))
			}
		}),
	}
}

// divideFloat8 divides in float64 and rounds once more to the fp8 format:
// the exactly rounded quotient for n < 2^40 (a float64 quotient of a 4-bit
// significand by such an n never lands on an fp8 midpoint unless the exact
// one does; divide_test.go checks every pattern against exact rationals).
func divideFloat8[T ~uint8](s []T, n int, widen func(T) float64, round func(float64) T) {
	d := float64(n)
	for i := range s {
		s[i] = round(widen(s[i]) / d)
	}
}
