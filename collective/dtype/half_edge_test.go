package dtype

import (
	"math"
	"testing"
)

// edgeCase is one conversion with a known answer. bits, when nonzero,
// gives the input as a float64 bit pattern (for NaN payloads).
type edgeCase struct {
	name string
	x    float64
	bits uint64
	want uint16
}

func (c edgeCase) input() float64 {
	if c.bits != 0 {
		return math.Float64frombits(c.bits)
	}
	return c.x
}

var bf16Edges = []edgeCase{
	{name: "+0", x: 0, want: 0x0000},
	{name: "-0", x: math.Copysign(0, -1), want: 0x8000},
	{name: "one", x: 1, want: 0x3f80},
	{name: "minus two", x: -2, want: 0xc000},
	{name: "max finite", x: 0x1.fep127, want: 0x7f7f},
	{name: "just below overflow threshold", x: math.Nextafter(0x1.ffp127, 0), want: 0x7f7f},
	{name: "overflow threshold ties to Inf", x: 0x1.ffp127, want: 0x7f80},
	{name: "float32 max overflows", x: math.MaxFloat32, want: 0x7f80},
	{name: "negative overflow", x: -1e39, want: 0xff80},
	{name: "+Inf", x: math.Inf(1), want: 0x7f80},
	{name: "-Inf", x: math.Inf(-1), want: 0xff80},
	{name: "min normal", x: 0x1p-126, want: 0x0080},
	{name: "max subnormal", x: 0x0.fep-126, want: 0x007f},
	{name: "min subnormal", x: 0x1p-133, want: 0x0001},
	{name: "half min subnormal ties to zero", x: 0x1p-134, want: 0x0000},
	{name: "above half min subnormal", x: math.Nextafter(0x1p-134, 1), want: 0x0001},
	{name: "negative tiny to -0", x: -0x1p-140, want: 0x8000},
	{name: "1.5 min subnormal ties to even 2", x: 0x3p-134, want: 0x0002},
	{name: "tie down to even", x: 1 + 0x1p-8, want: 0x3f80},
	{name: "tie up to even", x: 1 + 0x3p-8, want: 0x3f82},
	{name: "above tie by less than a float32 ulp", x: 1 + 0x1p-8 + 0x1p-30, want: 0x3f81},
	{name: "below tie", x: 1 + 0x1p-8 - 0x1p-30, want: 0x3f80},
	{name: "float64 subnormal to zero", x: 5e-324, want: 0x0000},
	{name: "pi", x: math.Pi, want: 0x4049},
	{name: "quiet NaN", bits: 0x7ff8000000000000, want: 0x7fc0},
	{name: "negative quiet NaN", bits: 0xfff8000000000000, want: 0xffc0},
	{name: "signaling NaN, low payload, stays NaN", bits: 0x7ff0000000000001, want: 0x7fc0},
	{name: "NaN payload kept", bits: 0x7ff5400000000000, want: 0x7fea},
}

var fp16Edges = []edgeCase{
	{name: "+0", x: 0, want: 0x0000},
	{name: "-0", x: math.Copysign(0, -1), want: 0x8000},
	{name: "one", x: 1, want: 0x3c00},
	{name: "minus two", x: -2, want: 0xc000},
	{name: "0.1", x: 0.1, want: 0x2e66},
	{name: "1/3", x: 1.0 / 3, want: 0x3555},
	{name: "max finite", x: 65504, want: 0x7bff},
	{name: "just below overflow threshold", x: math.Nextafter(65520, 0), want: 0x7bff},
	{name: "overflow threshold ties to Inf", x: 65520, want: 0x7c00},
	{name: "negative overflow threshold", x: -65520, want: 0xfc00},
	{name: "far overflow", x: 1e10, want: 0x7c00},
	{name: "+Inf", x: math.Inf(1), want: 0x7c00},
	{name: "-Inf", x: math.Inf(-1), want: 0xfc00},
	{name: "min normal", x: 0x1p-14, want: 0x0400},
	{name: "max subnormal", x: 0x3ffp-24, want: 0x03ff},
	{name: "max subnormal tie rounds to min normal", x: 0x7ffp-25, want: 0x0400},
	{name: "min subnormal", x: 0x1p-24, want: 0x0001},
	{name: "half min subnormal ties to zero", x: 0x1p-25, want: 0x0000},
	{name: "above half min subnormal", x: math.Nextafter(0x1p-25, 1), want: 0x0001},
	{name: "negative half min subnormal to -0", x: -0x1p-25, want: 0x8000},
	{name: "1.5 min subnormal ties to even 2", x: 0x3p-25, want: 0x0002},
	{name: "tie down to even", x: 1 + 0x1p-11, want: 0x3c00},
	{name: "tie up to even", x: 1 + 0x3p-11, want: 0x3c02},
	{name: "above tie by less than a float32 ulp", x: 1 + 0x1p-11 + 0x1p-40, want: 0x3c01},
	{name: "below tie", x: 1 + 0x1p-11 - 0x1p-40, want: 0x3c00},
	{name: "quiet NaN", bits: 0x7ff8000000000000, want: 0x7e00},
	{name: "negative quiet NaN", bits: 0xfff8000000000000, want: 0xfe00},
	{name: "signaling NaN, low payload, stays NaN", bits: 0x7ff0000000000001, want: 0x7e00},
	{name: "NaN payload kept", bits: 0xfff4000000000000, want: 0xff00},
}

func TestEdgeCases(t *testing.T) {
	for i, f := range formats {
		cases := [][]edgeCase{bf16Edges, fp16Edges}[i]
		for _, c := range cases {
			x := c.input()
			if got := f.fromF64(x); got != c.want {
				t.Errorf("%s from float64 %s (%v): got %#04x, want %#04x", f.name, c.name, x, got, c.want)
			}
			checkNearest(t, f, x, c.want) // the table itself is right
			x32 := float32(x)
			if math.IsNaN(x) || float64(x32) != x {
				continue // not a float32: covered by the float64 row only
			}
			if got := f.fromF32(x32); got != c.want {
				t.Errorf("%s from float32 %s (%v): got %#04x, want %#04x", f.name, c.name, x32, got, c.want)
			}
		}
	}
}

func TestFloat32NaNPayloads(t *testing.T) {
	for _, c := range []struct {
		bits       uint32
		bf16, fp16 uint16
	}{
		{0x7fc00000, 0x7fc0, 0x7e00},
		{0x7f800001, 0x7fc0, 0x7e00}, // signaling, payload below both formats
		{0xff812000, 0xffc1, 0xfe09}, // signaling with payload: quieted, kept
		{0x7fffffff, 0x7fff, 0x7fff},
	} {
		x := math.Float32frombits(c.bits)
		if got := BFloat16FromFloat32(x); uint16(got) != c.bf16 {
			t.Errorf("bfloat16(%#08x) = %#04x, want %#04x", c.bits, got, c.bf16)
		}
		if got := Float16FromFloat32(x); uint16(got) != c.fp16 {
			t.Errorf("float16(%#08x) = %#04x, want %#04x", c.bits, got, c.fp16)
		}
	}
}
