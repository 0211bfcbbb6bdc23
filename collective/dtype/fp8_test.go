package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fp8Format describes one 8-bit format to the table-driven tests.
type fp8Format struct {
	name     string
	from     func(float32) uint8
	to       func(uint8) float32
	isNaN    func(uint8) bool
	maxCode  uint8
	hasInf   bool
	maxValue float32
}

var fp8Formats = []fp8Format{
	{
		name: "e4m3", maxCode: 0x7e, maxValue: 448,
		from:  func(f float32) uint8 { return uint8(Float8E4M3FromFloat32(f)) },
		to:    func(h uint8) float32 { return Float8E4M3(h).Float32() },
		isNaN: func(h uint8) bool { return Float8E4M3(h).IsNaN() },
	},
	{
		name: "e5m2", maxCode: 0x7b, hasInf: true, maxValue: 57344,
		from:  func(f float32) uint8 { return uint8(Float8E5M2FromFloat32(f)) },
		to:    func(h uint8) float32 { return Float8E5M2(h).Float32() },
		isNaN: func(h uint8) bool { return Float8E5M2(h).IsNaN() },
	},
}

// TestFp8KnownValues pins values of the specification (OFP8, table 1).
func TestFp8KnownValues(t *testing.T) {
	for _, c := range []struct {
		name string
		code uint8
		want float64
	}{
		{"e4m3", 0x00, 0}, {"e4m3", 0x01, 0x1p-9}, {"e4m3", 0x07, 7 * 0x1p-9}, {"e4m3", 0x08, 0x1p-6},
		{"e4m3", 0x38, 1}, {"e4m3", 0x40, 2}, {"e4m3", 0x7e, 448}, {"e4m3", 0xfe, -448}, {"e4m3", 0xb8, -1},
		{"e5m2", 0x00, 0}, {"e5m2", 0x01, 0x1p-16}, {"e5m2", 0x03, 3 * 0x1p-16}, {"e5m2", 0x04, 0x1p-14},
		{"e5m2", 0x3c, 1}, {"e5m2", 0x7b, 57344}, {"e5m2", 0x7c, math.Inf(1)}, {"e5m2", 0xfc, math.Inf(-1)},
		{"e5m2", 0xbc, -1},
	} {
		f := fp8Formats[0]
		if c.name == "e5m2" {
			f = fp8Formats[1]
		}
		if got := f.to(c.code); float64(got) != c.want {
			t.Errorf("%s %#02x = %v, want %v", c.name, c.code, got, c.want)
		}
	}
	if got := Float8E4M3(0x80).Float32(); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("e4m3 0x80 = %v, want -0", got)
	}
}

// TestFp8AllPatterns checks all 256 patterns of each format: NaNs are
// exactly the specified patterns and convert to a NaN of their sign and
// back to a NaN of that sign; every other pattern converts to float32 and
// back to itself; values rise strictly with the magnitude pattern and are
// mirrored by the sign bit.
func TestFp8AllPatterns(t *testing.T) {
	for _, f := range fp8Formats {
		for c := range 256 {
			h := uint8(c)
			v := f.to(h)
			mag := h & 0x7f
			wantNaN := mag == 0x7f || f.hasInf && mag > 0x7c
			if f.isNaN(h) != wantNaN || (v != v) != wantNaN {
				t.Fatalf("%s %#02x: IsNaN %v, value %v, want NaN %v", f.name, h, f.isNaN(h), v, wantNaN)
			}
			if math.Signbit(float64(v)) != (h&0x80 != 0) {
				t.Fatalf("%s %#02x: value %v has the wrong sign", f.name, h, v)
			}
			back := f.from(v)
			if wantNaN {
				if !f.isNaN(back) || back&0x80 != h&0x80 {
					t.Fatalf("%s NaN %#02x: round trip gave %#02x", f.name, h, back)
				}
				continue
			}
			if back != h {
				t.Fatalf("%s %#02x = %v: round trip gave %#02x", f.name, h, v, back)
			}
			if h&0x80 == 0 && h > 0 && !f.isNaN(h) && !(f.to(h-1) < v) {
				t.Fatalf("%s %#02x = %v is not above %#02x = %v", f.name, h, v, h-1, f.to(h-1))
			}
			if h&0x80 == 0 && f.to(h|0x80) != -v {
				t.Fatalf("%s %#02x: negative pattern is not -%v", f.name, h, v)
			}
		}
	}
}

// TestFp8NearestAtEveryMidpoint converts the midpoint of every two
// neighbouring finite values (exact in float32), and the float32 values
// just around it: below goes down, above goes up, the tie to the even
// pattern; past the largest value E4M3 saturates and E5M2 overflows to Inf.
func TestFp8NearestAtEveryMidpoint(t *testing.T) {
	for _, f := range fp8Formats {
		for c := uint8(0); c <= f.maxCode; c++ {
			lo := f.to(c)
			// Past the largest finite value the spacing stays that of
			// its binade.
			hi := lo + (lo - f.to(c-1))
			if c < f.maxCode {
				hi = f.to(c + 1)
			}
			mid := (lo + hi) / 2
			if float64(mid) != (float64(lo)+float64(hi))/2 {
				t.Fatalf("%s: midpoint of %v and %v not exact", f.name, lo, hi)
			}
			up, tie := c+1, c
			if c&1 == 1 {
				tie = c + 1
			}
			if c == f.maxCode {
				up, tie = c, c // saturate
				if f.hasInf {
					up, tie = c+1, c+1 // Inf (the even pattern 0x7c)
				}
			}
			for _, s := range []uint8{0, 0x80} {
				sign := float32(1)
				if s != 0 {
					sign = -1
				}
				check := func(x float32, want uint8) {
					if got := f.from(sign * x); got != s|want {
						t.Fatalf("%s(%v): got %#02x, want %#02x", f.name, sign*x, got, s|want)
					}
				}
				check(mid, tie)
				check(math.Nextafter32(mid, 0), c)
				check(math.Nextafter32(mid, float32(math.Inf(1))), up)
			}
		}
		inf := float32(math.Inf(1))
		want := f.maxCode
		if f.hasInf {
			want = 0x7c
		}
		for _, x := range []float32{inf, math.MaxFloat32, 1e30} {
			if got := f.from(x); got != want {
				t.Errorf("%s(%v) = %#02x, want %#02x", f.name, x, got, want)
			}
			if got := f.from(-x); got != 0x80|want {
				t.Errorf("%s(%v) = %#02x, want %#02x", f.name, -x, got, 0x80|want)
			}
		}
	}
}

// TestFp8NearestRandom converts random float32 bit patterns and checks the
// result is nearest (exact distances), ties to even, NaN to NaN of the
// same sign, and out-of-range values saturate (E4M3) or become Inf (E5M2).
func TestFp8NearestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, f := range fp8Formats {
		for range 200000 {
			x := math.Float32frombits(rng.Uint32())
			if rng.IntN(2) == 0 { // concentrate on the formats' range
				x = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(40)-24))
			}
			got := f.from(x)
			if got&0x80 != uint8(math.Float32bits(x)>>24)&0x80 {
				t.Fatalf("%s(%v): %#02x has the wrong sign", f.name, x, got)
			}
			if x != x {
				if !f.isNaN(got) {
					t.Fatalf("%s(NaN): got %#02x", f.name, got)
				}
				continue
			}
			mag, ax := got&0x7f, math.Abs(float64(x))
			maxV := float64(f.maxValue)
			threshold := maxV + (maxV-float64(f.to(f.maxCode-1)))/2
			if ax >= threshold {
				want := f.maxCode
				if f.hasInf {
					want = 0x7c
				}
				if mag != want {
					t.Fatalf("%s(%v): got %#02x, want %#02x", f.name, x, got, want)
				}
				continue
			}
			if mag > f.maxCode {
				t.Fatalf("%s(%v): got %#02x, want a finite value", f.name, x, got)
			}
			d := distance(ax, float64(f.to(mag)))
			for _, n := range []int{int(mag) - 1, int(mag) + 1} {
				if n < 0 || n > int(f.maxCode) {
					continue
				}
				switch d.Cmp(distance(ax, float64(f.to(uint8(n))))) {
				case 1:
					t.Fatalf("%s(%v): got %#02x, but %#02x is nearer", f.name, x, got, n)
				case 0:
					if mag&1 != 0 {
						t.Fatalf("%s(%v): tie between %#02x and %#02x, got the odd one", f.name, x, mag, n)
					}
				}
			}
		}
	}
}

// TestFp8E5M2NaNPayload checks E5M2's NaN rule: quiet, f's sign, and the
// payload bit after f's quiet bit.
func TestFp8E5M2NaNPayload(t *testing.T) {
	for _, c := range []struct {
		bits uint32
		want Float8E5M2
	}{
		{0x7fc00000, 0x7e}, {0xffc00000, 0xfe}, {0x7fe00000, 0x7f}, {0x7f800001, 0x7e}, {0xffa00000, 0xff},
	} {
		if got := Float8E5M2FromFloat32(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("Float8E5M2FromFloat32(%#08x) = %#02x, want %#02x", c.bits, got, c.want)
		}
	}
	if got := math.Float32bits(Float8E5M2(0x7d).Float32()); got != 0x7fa00000 {
		t.Errorf("Float8E5M2(0x7d).Float32() = %#08x, want the signaling NaN 0x7fa00000", got)
	}
}
