package dtype

import (
	"math"
	"testing"
)

func addFloat64Seeds(f *testing.F) {
	for _, cases := range [][]edgeCase{bf16Edges, fp16Edges} {
		for _, c := range cases {
			f.Add(math.Float64bits(c.input()))
		}
	}
}

// fuzzFromFloat64 checks that format fm rounds x to nearest even and is
// monotonic between x and its float64 neighbours.
func fuzzFromFloat64(t *testing.T, fm format, bits uint64) {
	x := math.Float64frombits(bits)
	got := fm.fromF64(x)
	checkNearest(t, fm, x, got)
	if math.IsNaN(x) {
		return
	}
	if up := math.Nextafter(x, math.Inf(1)); fm.value(fm.fromF64(up)) < fm.value(got) {
		t.Fatalf("%s not monotonic at %v", fm.name, x)
	}
	if down := math.Nextafter(x, math.Inf(-1)); fm.value(fm.fromF64(down)) > fm.value(got) {
		t.Fatalf("%s not monotonic at %v", fm.name, x)
	}
}

// fuzzFromFloat32 checks that format fm rounds x to nearest even and agrees
// with its float64 path.
func fuzzFromFloat32(t *testing.T, fm format, bits uint32) {
	x := math.Float32frombits(bits)
	got := fm.fromF32(x)
	checkNearest(t, fm, float64(x), got)
	if !math.IsNaN(float64(x)) && got != fm.fromF64(float64(x)) {
		t.Fatalf("%s(float32 %v) = %#04x, but from float64 %#04x", fm.name, x, got, fm.fromF64(float64(x)))
	}
}

func FuzzBFloat16FromFloat64(f *testing.F) {
	addFloat64Seeds(f)
	f.Fuzz(func(t *testing.T, bits uint64) { fuzzFromFloat64(t, formats[0], bits) })
}

func FuzzFloat16FromFloat64(f *testing.F) {
	addFloat64Seeds(f)
	f.Fuzz(func(t *testing.T, bits uint64) { fuzzFromFloat64(t, formats[1], bits) })
}

func addFloat32Seeds(f *testing.F) {
	for _, b := range []uint32{0, 0x80000000, 0x3f800000, 0x3f808000, 0x3f818000, 0x33000000, 0x477fefff,
		0x477ff000, 0x7f7fffff, 0x7f800000, 0x7f800001, 0xffc00000, 0x00000001, 0x00800000} {
		f.Add(b)
	}
}

func FuzzBFloat16FromFloat32(f *testing.F) {
	addFloat32Seeds(f)
	f.Fuzz(func(t *testing.T, bits uint32) { fuzzFromFloat32(t, formats[0], bits) })
}

func FuzzFloat16FromFloat32(f *testing.F) {
	addFloat32Seeds(f)
	f.Fuzz(func(t *testing.T, bits uint32) { fuzzFromFloat32(t, formats[1], bits) })
}

// FuzzMonotonic checks x <= y implies round(x) <= round(y) for both formats
// and both source widths.
func FuzzMonotonic(f *testing.F) {
	f.Add(math.Float64bits(1), math.Float64bits(1+0x1p-11))
	f.Add(math.Float64bits(-0x1p-25), math.Float64bits(0))
	f.Add(math.Float64bits(65519), math.Float64bits(65520))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		if math.IsNaN(x) || math.IsNaN(y) {
			return
		}
		if x > y {
			x, y = y, x
		}
		for _, fm := range formats {
			if fm.value(fm.fromF64(x)) > fm.value(fm.fromF64(y)) {
				t.Fatalf("%s from float64 not monotonic: %v, %v", fm.name, x, y)
			}
			if fm.value(fm.fromF32(float32(x))) > fm.value(fm.fromF32(float32(y))) {
				t.Fatalf("%s from float32 not monotonic: %v, %v", fm.name, x, y)
			}
		}
	})
}
