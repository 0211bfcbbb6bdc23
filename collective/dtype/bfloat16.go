package dtype

import "math"

// BFloat16 is a bfloat16 number stored as its bit pattern: the upper 16 bits
// of an IEEE-754 binary32 (1 sign bit, 8 exponent bits, 7 significand
// bits). It has float32's exponent range, subnormals included, and 8 bits of
// precision. The zero value is +0.
type BFloat16 uint16

const (
	bf16ManBits = 7
	bf16ExpBits = 8
	bf16Quiet   = 1 << (bf16ManBits - 1)
)

// BFloat16FromFloat32 rounds f to the nearest BFloat16, ties to even.
// Signed zeros and infinities are kept; finite values at or beyond the
// overflow threshold (the midpoint between the largest finite bfloat16,
// 0x7F7F, and 2^128) become ±Inf. A NaN becomes a quiet NaN with f's sign
// and the leading 6 bits of f's payload after the quiet bit, so it never
// turns into an infinity.
func BFloat16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return BFloat16(b>>16 | bf16Quiet)
	}
	// Adding 0x7fff plus the kept part's lowest bit rounds to nearest
	// even; a carry propagates into the exponent, up to Inf.
	return BFloat16((b + 0x7fff + b>>16&1) >> 16)
}

// BFloat16FromFloat64 rounds f to the nearest BFloat16 in one step (never
// through float32, which could round twice), ties to even, with the same
// handling of zeros, infinities, overflow and NaN as [BFloat16FromFloat32].
func BFloat16FromFloat64(f float64) BFloat16 {
	return BFloat16(narrowFloat64(f, bf16ManBits, bf16ExpBits))
}

// Float32 returns h as a float32. The conversion is exact; a NaN keeps its
// sign and payload bit for bit (a signaling NaN stays signaling).
func (h BFloat16) Float32() float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// Float64 returns h as a float64. The conversion is exact; a NaN keeps its
// sign and payload bit for bit (a signaling NaN stays signaling).
func (h BFloat16) Float64() float64 {
	if h.IsNaN() {
		return math.Float64frombits(uint64(h&0x8000)<<48 | 0x7ff<<52 | uint64(h&0x7f)<<45)
	}
	return float64(h.Float32())
}

// IsNaN reports whether h is a NaN.
func (h BFloat16) IsNaN() bool { return h&0x7fff > 0x7f80 }

// String formats h as the shortest decimal that converts back to h with
// BFloat16FromFloat64, or "NaN", "+Inf", "-Inf".
func (h BFloat16) String() string {
	return formatHalf(h.Float64(), func(f float64) bool { return BFloat16FromFloat64(f) == h })
}
