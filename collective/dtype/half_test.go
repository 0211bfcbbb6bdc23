package dtype

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoundTripAllPatterns widens every 16-bit pattern to float32 and to
// float64 and narrows it back. Every pattern returns unchanged except the
// signaling NaNs, which narrowing quiets (IEEE 754 conversion rules): they
// return with the quiet bit set and their sign and payload otherwise kept.
func TestRoundTripAllPatterns(t *testing.T) {
	for _, f := range formats {
		quieted := 0
		for i := 0; i < 1<<16; i++ {
			h := uint16(i)
			want := h
			if f.isNaN(h) && h&f.quietBit() == 0 {
				want |= f.quietBit()
				quieted++
			}
			if got := f.fromF32(f.toF32(h)); got != want {
				t.Fatalf("%s %#04x -> float32 -> %#04x, want %#04x", f.name, h, got, want)
			}
			if got := f.fromF64(f.toF64(h)); got != want {
				t.Fatalf("%s %#04x -> float64 -> %#04x, want %#04x", f.name, h, got, want)
			}
			if !f.isNaN(h) && f.toF64(h) != float64(f.toF32(h)) {
				t.Fatalf("%s %#04x: Float64 %v != Float32 %v", f.name, h, f.toF64(h), f.toF32(h))
			}
		}
		// 2 signs × (2^(manBits-1) - 1) nonzero payloads without quiet bit.
		require.Equal(t, 2*(1<<(f.manBits-1)-1), quieted, f.name)
	}
}

// TestWideningKeepsNaNBits checks that widening a NaN keeps its sign and
// payload bit for bit, so a signaling NaN stays signaling.
func TestWideningKeepsNaNBits(t *testing.T) {
	require.Equal(t, uint32(0xff810000), math.Float32bits(BFloat16(0xff81).Float32()))
	require.Equal(t, uint64(0xfff0200000000000), math.Float64bits(BFloat16(0xff81).Float64()))
	require.Equal(t, uint32(0x7f802000), math.Float32bits(Float16(0x7c01).Float32()))
	require.Equal(t, uint64(0x7ff0040000000000), math.Float64bits(Float16(0x7c01).Float64()))
	require.Equal(t, uint64(0xfff8000000000000), math.Float64bits(Float16(0xfe00).Float64()))
}

// TestNearestAtEveryMidpoint checks rounding exhaustively where it is
// hardest: at every midpoint between two adjacent 16-bit values (a tie), and
// at the float64 and float32 values just either side of it, for both signs.
func TestNearestAtEveryMidpoint(t *testing.T) {
	for _, f := range formats {
		for h := uint16(0); h < f.infBits(); h++ {
			mid := (f.magnitude(h) + f.magnitude(h+1)) / 2 // exact: at most manBits+2 bits
			for _, x := range []float64{mid, math.Nextafter(mid, 0), math.Nextafter(mid, math.Inf(1))} {
				checkNearest(t, f, x, f.fromF64(x))
				checkNearest(t, f, -x, f.fromF64(-x))
			}
			m32 := float32(mid) // exact: a midpoint has at most manBits+2 bits
			for _, x := range []float32{m32, math.Nextafter32(m32, 0), math.Nextafter32(m32, float32(math.Inf(1)))} {
				checkNearest(t, f, float64(x), f.fromF32(x))
				checkNearest(t, f, -float64(x), f.fromF32(-x))
			}
		}
	}
}

// TestNearestRandom checks rounding of random float64 and float32 values
// spread over the 16-bit formats' exponent ranges and a little beyond, and
// that the conversion is monotonic on them.
func TestNearestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range formats {
		expMin, expMax := -150, 130 // bfloat16: float32's range
		if f.manBits == fp16ManBits {
			expMin, expMax = -27, 17
		}
		xs := make([]float64, 20000)
		for i := range xs {
			x := math.Ldexp(1+rng.Float64(), expMin+rng.IntN(expMax-expMin+1))
			if rng.IntN(2) == 0 {
				x = -x
			}
			xs[i] = x
			checkNearest(t, f, x, f.fromF64(x))
			x32 := float32(x)
			checkNearest(t, f, float64(x32), f.fromF32(x32))
		}
		sort.Float64s(xs)
		for i := 1; i < len(xs); i++ {
			if f.value(f.fromF64(xs[i-1])) > f.value(f.fromF64(xs[i])) {
				t.Fatalf("%s not monotonic: %v -> %#04x, %v -> %#04x",
					f.name, xs[i-1], f.fromF64(xs[i-1]), xs[i], f.fromF64(xs[i]))
			}
		}
	}
}

// TestFromFloat32AgreesWithFromFloat64 checks the float32 fast paths against
// the float64 path (float32 to float64 is exact, so both round once) on every
// float32 whose low bits are near a rounding boundary of the 16-bit format,
// over all exponents and both signs.
func TestFromFloat32AgreesWithFromFloat64(t *testing.T) {
	for _, f := range formats {
		drop := 23 - f.manBits // float32 significand bits the format drops
		half := uint32(1) << (drop - 1)
		lows := []uint32{0, 1, half - 1, half, half + 1, 1<<drop - 1}
		for top := uint32(0); top < 1<<(9+f.manBits); top++ { // sign, exponent, kept bits
			for _, low := range lows {
				x := math.Float32frombits(top<<drop | low)
				want := f.fromF64(float64(x))
				if math.IsNaN(float64(x)) {
					want = f.fromF64(math.Float64frombits(math.Float64bits(float64(x)) | 1<<51))
				}
				if got := f.fromF32(x); got != want {
					t.Fatalf("%s(float32 %#08x) = %#04x, via float64 %#04x", f.name, top<<drop|low, got, want)
				}
			}
		}
	}
}

// TestMonotonicOverAllPatterns checks that the values of all non-NaN
// patterns, sorted, convert to non-decreasing patterns' values from float32
// and float64 and that converting back is stable.
func TestMonotonicOverAllPatterns(t *testing.T) {
	for _, f := range formats {
		var vals []float64
		for i := 0; i < 1<<16; i++ {
			if !f.isNaN(uint16(i)) {
				vals = append(vals, f.toF64(uint16(i)))
			}
		}
		sort.Float64s(vals)
		for i := 1; i < len(vals); i++ {
			a, b := vals[i-1], vals[i]
			require.LessOrEqual(t, f.value(f.fromF64(a)), f.value(f.fromF64(b)), f.name)
			require.LessOrEqual(t, f.value(f.fromF32(float32(a))), f.value(f.fromF32(float32(b))), f.name)
		}
	}
}

func TestStringRoundTripsAllPatterns(t *testing.T) {
	for _, f := range formats {
		for i := 0; i < 1<<16; i++ {
			h := uint16(i)
			s := f.str(h)
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err, "%s %#04x: %q", f.name, h, s)
			if f.isNaN(h) {
				require.True(t, math.IsNaN(v), "%s %#04x: %q", f.name, h, s)
				continue
			}
			if got := f.fromF64(v); got != h {
				t.Fatalf("%s %#04x: String %q parses back to %#04x", f.name, h, s, got)
			}
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		h    uint16
		bf16 string
		fp16 string
	}{
		{0x0000, "0", "0"},
		{0x8000, "-0", "-0"},
		{0x3c00, "0.0078", "1"},
		{0x3f80, "1", "1.875"},
		{0xc000, "-2", "-2"},
		{0x2e66, "5.23e-11", "0.1"},
		{0x7bff, "2.65e+36", "6.55e+04"},
		{0x0001, "9e-41", "6e-08"},
		{0x7f80, "+Inf", "NaN"},
		{0x7c00, "2.66e+36", "+Inf"},
		{0xff80, "-Inf", "NaN"},
		{0xfc00, "-2.66e+36", "-Inf"},
		{0x7fc0, "NaN", "NaN"},
		{0x7f7f, "3.39e+38", "NaN"},
	} {
		require.Equal(t, tc.bf16, BFloat16(tc.h).String(), "bf16 %#04x", tc.h)
		require.Equal(t, tc.fp16, Float16(tc.h).String(), "fp16 %#04x", tc.h)
	}
}
