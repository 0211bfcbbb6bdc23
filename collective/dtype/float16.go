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
	exp := int(b>>23&0xff) - 127
	frac := b & (1<<23 - 1)
	switch {
	case exp == 128: // Inf or NaN
		if frac == 0 {
			return Float16(sign | 0x7c00)
		}
		return Float16(sign | 0x7c00 | fp16Quiet | uint16(frac>>13))
	case exp > 15:
		return Float16(sign | 0x7c00)
	case exp < -25:
		return Float16(sign) // includes zeros and float32 subnormals
	}
	sig := frac | 1<<23
	shift := uint(13)
	if exp < -14 {
		shift += uint(-14 - exp)
	}
	out := roundShift32(sig, shift)
	if exp >= -14 {
		out += uint32(exp+14) << 10 // see narrowFloat64
	}
	if out >= 0x7c00 {
		return Float16(sign | 0x7c00)
	}
	return Float16(sign | uint16(out))
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
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case 0:
		// frac × 2^-24, exact: frac has at most 10 bits and the
		// product is a normal float32.
		v := float32(frac) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
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
