package reduce

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/stretchr/testify/require"
)

// fp8Case describes one 8-bit float type to the exhaustive tests, with
// its rounding written out naively: the nearest of the 256 patterns.
type fp8Case struct {
	dt      dtype.DataType
	value   func(c uint8) float64
	maxCode uint8 // the largest finite magnitude
	hasInf  bool
}

var fp8Cases = []fp8Case{
	{dtype.Float8E4M3Type, func(c uint8) float64 { return dtype.Float8E4M3(c).Float64() }, 0x7e, false},
	{dtype.Float8E5M2Type, func(c uint8) float64 { return dtype.Float8E5M2(c).Float64() }, 0x7b, true},
}

// nearest returns the pattern nearest to x (not NaN), ties to the even
// pattern, by trying every finite magnitude; E4M3 saturates at its largest
// finite value, E5M2 overflows to Inf past the midpoint above it. A zero
// result has x's sign.
func (f fp8Case) nearest(x float64) uint8 {
	sign := uint8(0)
	if math.Signbit(x) {
		sign = 0x80
	}
	ax, top := math.Abs(x), f.value(f.maxCode)
	if ax >= top {
		if f.hasInf && ax >= top+(top-f.value(f.maxCode-1))/2 {
			return sign | 0x7c
		}
		return sign | f.maxCode
	}
	best := uint8(0)
	for c := uint8(1); c <= f.maxCode; c++ {
		d, bd := math.Abs(f.value(c)-ax), math.Abs(f.value(best)-ax) // exact: same binade scale
		if d < bd || d == bd && c&1 == 0 {
			best = c
		}
	}
	return sign | best
}

// quiet returns NaN pattern c quieted as the kernels return it.
func (f fp8Case) quiet(c uint8) uint8 {
	if f.hasInf {
		return c | 0x02
	}
	return c
}

func (f fp8Case) isNaN(c uint8) bool { return math.IsNaN(f.value(c)) }

// TestFloat8AllPairs runs every op of both fp8 types, active and portable
// kernels, over all 256x256 pairs of patterns against the naive reference:
// the exact result in float64 rounded by trying every pattern. A NaN sum or
// product must be a's NaN quieted if a is one, else b's; where neither is
// (Inf - Inf, 0 * Inf) and for Min and Max any NaN will do.
func TestFloat8AllPairs(t *testing.T) {
	a, b := make([]byte, 1<<16), make([]byte, 1<<16)
	for i := range a {
		a[i], b[i] = byte(i), byte(i>>8)
	}
	for _, f := range fp8Cases {
		for _, op := range Ops() {
			want, anyNaN := make([]byte, len(a)), make([]bool, len(a))
			for i := range a {
				x, y := f.value(a[i]), f.value(b[i])
				r := refFloat(op, x, y)
				switch {
				case !math.IsNaN(r):
					want[i] = f.nearest(r)
				case (op == Sum || op == Prod || op == Avg) && f.isNaN(a[i]):
					want[i] = f.quiet(a[i])
				case (op == Sum || op == Prod || op == Avg) && f.isNaN(b[i]):
					want[i] = f.quiet(b[i])
				default:
					want[i], anyNaN[i] = 0x7f, true
				}
			}
			for name, get := range map[string]func(dtype.DataType, Op) (Kernel, error){"active": Lookup, "portable": Portable} {
				k, err := get(f.dt, op)
				require.NoError(t, err)
				got := make([]byte, len(a))
				k(got, a, b)
				for i := range got {
					if got[i] == want[i] || anyNaN[i] && f.isNaN(got[i]) {
						continue
					}
					t.Fatalf("%s %v %v: %#02x (%v), %#02x (%v): got %#02x, want %#02x",
						name, f.dt, op, a[i], f.value(a[i]), b[i], f.value(b[i]), got[i], want[i])
				}
				inPlace := clone(a)
				k(inPlace, inPlace, b)
				requireSameElements(t, f.dt, fmt.Sprintf("%s %v %v in place", name, f.dt, op), inPlace, got)
			}
		}
	}
}

// TestFloat8Saturation pins the overflow rules: E4M3 saturates, E5M2
// becomes Inf.
func TestFloat8Saturation(t *testing.T) {
	for _, c := range []struct {
		dt      dtype.DataType
		op      Op
		x, y, r byte
	}{
		{dtype.Float8E4M3Type, Sum, 0x7e, 0x7e, 0x7e},  // 448 + 448 = 448
		{dtype.Float8E4M3Type, Sum, 0xfe, 0xfe, 0xfe},  // -448 + -448 = -448
		{dtype.Float8E4M3Type, Prod, 0x7e, 0x48, 0x7e}, // 448 * 2
		{dtype.Float8E4M3Type, Sum, 0x7e, 0xfe, 0x00},  // 448 - 448 = +0
		{dtype.Float8E5M2Type, Sum, 0x7b, 0x7b, 0x7c},  // 57344 + 57344 = Inf
		{dtype.Float8E5M2Type, Prod, 0xfb, 0x40, 0xfc}, // -57344 * 2 = -Inf
	} {
		got := []byte{0}
		require.NoError(t, Apply(c.dt, c.op, got, []byte{c.x}, []byte{c.y}))
		require.Equal(t, c.r, got[0], "%v %v %#02x %#02x", c.dt, c.op, c.x, c.y)
	}
}

// TestDivideByFloat8Exact divides every pattern by many divisors and
// checks against exact rationals that the result is the nearest pattern
// (ties to even), with x's sign on zeros, NaN for NaN and Inf for Inf.
func TestDivideByFloat8Exact(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	ns := intsThatFit(3, 5, 7, 1000, 2047, 12345, 1<<20, 1<<30+3, 1<<39-1)
	for n := 2; n <= 200; n++ {
		ns = append(ns, n)
	}
	for _, f := range fp8Cases {
		for _, n := range ns {
			got := clone(all)
			require.NoError(t, DivideBy(f.dt, got, n))
			for i, c := range got {
				x := f.value(all[i])
				if math.IsNaN(x) || math.IsInf(x, 0) {
					if math.IsNaN(x) != f.isNaN(c) || math.IsInf(x, 0) && f.value(c) != x {
						t.Fatalf("%v %v / %d: got %#02x", f.dt, x, n, c)
					}
					continue
				}
				if c&0x80 != all[i]&0x80 {
					t.Fatalf("%v %v / %d: got %#02x, the wrong sign", f.dt, x, n, c)
				}
				q := new(big.Rat).SetFloat64(math.Abs(x))
				q.Quo(q, new(big.Rat).SetInt64(int64(n)))
				dist := func(m uint8) *big.Rat {
					d := new(big.Rat).SetFloat64(f.value(m))
					return d.Abs(d.Sub(d, q))
				}
				mag := c & 0x7f
				d := dist(mag)
				for _, m := range []int{int(mag) - 1, int(mag) + 1} {
					if m < 0 || m > int(f.maxCode) {
						continue
					}
					cmp := d.Cmp(dist(uint8(m)))
					if cmp > 0 || cmp == 0 && mag&1 != 0 {
						t.Fatalf("%v %v / %d: got %#02x (%v), %#02x is nearer or the even tie", f.dt, x, n, c, f.value(c), m)
					}
				}
			}
		}
	}
}
