package dtype

import (
	"math"
	"math/big"
	"testing"
)

// format describes one 16-bit float type to the table-driven tests, so that
// every check runs on both.
type format struct {
	name    string
	manBits uint
	fromF32 func(float32) uint16
	fromF64 func(float64) uint16
	toF32   func(uint16) float32
	toF64   func(uint16) float64
	str     func(uint16) string
}

var formats = []format{
	{
		name: "bfloat16", manBits: bf16ManBits,
		fromF32: func(f float32) uint16 { return uint16(BFloat16FromFloat32(f)) },
		fromF64: func(f float64) uint16 { return uint16(BFloat16FromFloat64(f)) },
		toF32:   func(h uint16) float32 { return BFloat16(h).Float32() },
		toF64:   func(h uint16) float64 { return BFloat16(h).Float64() },
		str:     func(h uint16) string { return BFloat16(h).String() },
	},
	{
		name: "float16", manBits: fp16ManBits,
		fromF32: func(f float32) uint16 { return uint16(Float16FromFloat32(f)) },
		fromF64: func(f float64) uint16 { return uint16(Float16FromFloat64(f)) },
		toF32:   func(h uint16) float32 { return Float16(h).Float32() },
		toF64:   func(h uint16) float64 { return Float16(h).Float64() },
		str:     func(h uint16) string { return Float16(h).String() },
	},
}

func (f format) infBits() uint16     { return 0x7fff &^ (1<<f.manBits - 1) }
func (f format) quietBit() uint16    { return 1 << (f.manBits - 1) }
func (f format) isNaN(h uint16) bool { return h&0x7fff > f.infBits() }

// overflowThreshold is the smallest magnitude that rounds to Inf: the
// midpoint between the largest finite value and the next power of two.
func (f format) overflowThreshold() float64 {
	maxFinite := f.toF64(f.infBits() - 1)
	return maxFinite + (maxFinite-f.toF64(f.infBits()-2))/2
}

// magnitude returns the exact value of the non-negative pattern h, where
// the Inf pattern stands for 2^(emax+1), the value a finite rounding would
// have if the exponent range went on.
func (f format) magnitude(h uint16) float64 {
	if h == f.infBits() {
		maxFinite := f.toF64(f.infBits() - 1)
		return maxFinite + (maxFinite - f.toF64(f.infBits()-2))
	}
	return f.toF64(h)
}

// exactPrec is a big.Float precision at which the difference of any two
// finite float64 values is exact (they span 2^1024 down to 2^-1074).
const exactPrec = 2200

// distance returns |x - y| exactly.
func distance(x, y float64) *big.Float {
	d := new(big.Float).SetPrec(exactPrec).SetFloat64(x)
	d.Sub(d, new(big.Float).SetFloat64(y))
	return d.Abs(d)
}

// checkNearest fails t unless got is x rounded to nearest, ties to even, in
// format f: NaN to a quiet NaN with x's sign and leading payload bits,
// infinities and overflow to Inf, and otherwise the value no farther from x
// than either neighbour of got, with the even one on a tie.
func checkNearest(t *testing.T, f format, x float64, got uint16) {
	t.Helper()
	wantSign := uint16(0)
	if math.Signbit(x) {
		wantSign = 0x8000
	}
	if got&0x8000 != wantSign {
		t.Fatalf("%s(%v = %#x): got %#04x, sign differs", f.name, x, math.Float64bits(x), got)
	}
	mag := got & 0x7fff
	switch {
	case math.IsNaN(x):
		payload := uint16(math.Float64bits(x) >> (52 - f.manBits) & (1<<f.manBits - 1))
		if want := wantSign | f.infBits() | f.quietBit() | payload; got != want {
			t.Fatalf("%s(NaN %#x): got %#04x, want %#04x", f.name, math.Float64bits(x), got, want)
		}
		return
	case math.Abs(x) >= f.overflowThreshold():
		if mag != f.infBits() {
			t.Fatalf("%s(%v): got %#04x, want Inf", f.name, x, got)
		}
		return
	case mag >= f.infBits():
		t.Fatalf("%s(%v): got %#04x, want a finite value", f.name, x, got)
	}
	dist := func(h uint16) *big.Float { return distance(math.Abs(x), f.magnitude(h)) }
	d := dist(mag)
	neighbours := []uint16{mag + 1}
	if mag > 0 {
		neighbours = append(neighbours, mag-1)
	}
	for _, n := range neighbours {
		switch d.Cmp(dist(n)) {
		case 1:
			t.Fatalf("%s(%v): got %#04x, but %#04x is nearer", f.name, x, got, n)
		case 0:
			if mag&1 != 0 {
				t.Fatalf("%s(%v): tie between %#04x and %#04x, got the odd one", f.name, x, got, n)
			}
		}
	}
}

// value returns the value of h for ordering, NaN excluded.
func (f format) value(h uint16) float64 { return f.toF64(h) }
