package dtype

import (
	"math"
	"strconv"
)

// Float16 is an IEEE-754 binary16 number stored as its bit pattern (1 sign
// bit, 5 exponent bits, 10 significand bits): largest finite 65504, smallest
// normal 2^-14, smallest subnormal 2^-24. The zero value is +0.
type Float16 uint16

const (
	fp16ManBits = 10
	fp16ExpBits = 5
	fp16Quiet   = 1 << (fp16ManBits - 1)
)

// Float16FromFloat32 rounds f to the nearest Float16, ties to even. Signed
// zeros and infinities are kept; finite values at or beyond the overflow
// threshold 65520 become ±Inf; values below 2^-14 become subnormals, and
// those at most 2^-25 become a zero of f's sign. A NaN becomes a quiet NaN
// with f's sign and the leading 9 bits of f's payload after the quiet bit,
// so it never turns into an infinity.
func Float16FromFloat32(f float32) Float16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	abs := b & 0x7fffffff
	switch {
	case abs >= 0x47800000: // |f| >= 2^16, Inf or NaN
		if abs > 0x7f800000 {
			return Float16(sign | 0x7c00 | fp16Quiet | uint16(abs>>13)&0x3ff)
		}
		return Float16(sign | 0x7c00)
	case abs < 0x38800000: // |f| < 2^-14: the result is subnormal or zero
		// 0.5 + |f| lies in [0.5, 1), where float32's spacing is 2^-24,
		// the float16 subnormal spacing: the FPU's addition rounds |f| to
		// a multiple k of 2^-24, nearest even, and the low bits hold k
		// (k = 1024 is the smallest normal, whose pattern is also 1024).
		v := math.Float32frombits(abs) + 0.5
		return Float16(sign | uint16(math.Float32bits(v)-0x3f000000))
	}
	// Normal: rebias the exponent and round away the 13 low bits to
	// nearest even with one addition (no data-dependent branch); a carry
	// moves into the exponent, up to Inf for |f| >= 65520.
	odd := abs >> 13 & 1
	return Float16(sign | uint16((abs-(127-15)<<23+0xfff+odd)>>13))
}

// Float16FromFloat64 rounds f to the nearest Float16 in one step (never
// through float32, which could round twice), ties to even, with the same
// handling of zeros, infinities, overflow and NaN as [Float16FromFloat32].
func Float16FromFloat64(f float64) Float16 {
	return Float16(narrowFloat64(f, fp16ManBits, fp16ExpBits))
}

// Float32 returns h as a float32. The conversion is exact; a NaN keeps its
// sign and payload bit for bit (a signaling NaN stays signaling).
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	bits := uint32(h&0x7fff) << 13 // exponent and significand in float32's places
	switch bits & 0x0f800000 {
	case 0x0f800000: // Inf or NaN: exponent all ones
		bits |= 0x70000000
	case 0: // zero or subnormal: frac × 2^-24, computed exactly as
		// (2^-14 + frac × 2^-24) - 2^-14
		bits = math.Float32bits(math.Float32frombits(bits+(127-14)<<23) - 0x1p-14)
	default: // normal: rebias the exponent from 15 to 127
		bits += (127 - 15) << 23
	}
	return math.Float32frombits(sign | bits)
}

// Float64 returns h as a float64. The conversion is exact; a NaN keeps its
// sign and payload bit for bit (a signaling NaN stays signaling).
func (h Float16) Float64() float64 {
	if h.IsNaN() {
		return math.Float64frombits(uint64(h&0x8000)<<48 | 0x7ff<<52 | uint64(h&0x3ff)<<42)
	}
	return float64(h.Float32())
}

// IsNaN reports whether h is a NaN.
func (h Float16) IsNaN() bool { return h&0x7fff > 0x7c00 }

// String formats h as the shortest decimal that converts back to h with
// Float16FromFloat64, or "NaN", "+Inf", "-Inf".
func (h Float16) String() string {
	return formatHalf(h.Float64(), func(f float64) bool { return Float16FromFloat64(f) == h })
}

// formatHalf formats v (the exact value of a 16-bit float) with the fewest
// significant digits for which roundTrips reports that the decimal converts
// back to the same 16-bit value.
func formatHalf(v float64, roundTrips func(float64) bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for prec := 1; prec < 17; prec++ {
		s := strconv.FormatFloat(v, 'g', prec, 64)
		if f, err := strconv.ParseFloat(s, 64); err == nil && roundTrips(f) {
			return s
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
