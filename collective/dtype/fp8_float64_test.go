package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFp8FromFloat64 checks the float64 conversions against the float32
// ones on float32 values (random patterns, NaNs included), and at every
// midpoint of both formats one float64 step either side, where a float32
// rounding first would land on the midpoint itself.
func TestFp8FromFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(64, 8))
	for range 200000 {
		x := math.Float32frombits(rng.Uint32())
		if a, b := Float8E4M3FromFloat64(float64(x)), Float8E4M3FromFloat32(x); a != b {
			t.Fatalf("e4m3(%v): float64 %#02x, float32 %#02x", x, a, b)
		}
		if a, b := Float8E5M2FromFloat64(float64(x)), Float8E5M2FromFloat32(x); a != b {
			t.Fatalf("e5m2(%v): float64 %#02x, float32 %#02x", x, a, b)
		}
	}
	for _, f := range []struct {
		name string
		from func(float64) uint8
		to   func(uint8) float64
		max  uint8
	}{
		{"e4m3", func(x float64) uint8 { return uint8(Float8E4M3FromFloat64(x)) }, func(c uint8) float64 { return Float8E4M3(c).Float64() }, 0x7e},
		{"e5m2", func(x float64) uint8 { return uint8(Float8E5M2FromFloat64(x)) }, func(c uint8) float64 { return Float8E5M2(c).Float64() }, 0x7b},
	} {
		for c := uint8(0); c < f.max; c++ {
			mid := (f.to(c) + f.to(c+1)) / 2
			for _, s := range []float64{1, -1} {
				sign := uint8(0)
				if s < 0 {
					sign = 0x80
				}
				if got := f.from(s * math.Nextafter(mid, 0)); got != sign|c {
					t.Fatalf("%s(just below %v): got %#02x, want %#02x", f.name, s*mid, got, sign|c)
				}
				if got := f.from(s * math.Nextafter(mid, math.Inf(1))); got != sign|(c+1) {
					t.Fatalf("%s(just above %v): got %#02x, want %#02x", f.name, s*mid, got, sign|(c+1))
				}
			}
		}
	}
	if got := Float8E5M2FromFloat64(math.Float64frombits(0xfff4000000000000)); got != 0xff {
		t.Errorf("e5m2 of a NaN with the payload bit after the quiet bit: got %#02x, want 0xff", got)
	}
	if got := Float8E4M3FromFloat64(math.Inf(-1)); got != 0xfe {
		t.Errorf("e4m3(-Inf) = %#02x, want -448 (0xfe)", got)
	}
}
