package dtype

import "math"

// This file holds the rounding shared by the two 16-bit formats: a binary
// float of 1 sign bit, expBits exponent bits and manBits explicit
// significand bits (bfloat16: 8 and 7; binary16: 5 and 10).

// narrowFloat64 rounds x to the 16-bit format with the given field widths,
// once, to nearest with ties to even, and returns its bit pattern. A NaN
// becomes a quiet NaN with x's sign and the leading bits of its payload.
// Values whose magnitude reaches the overflow threshold become ±Inf, tiny
// values become subnormals or a zero of x's sign.
func narrowFloat64(x float64, manBits, expBits uint) uint16 {
	const fracBits = 52
	bits := math.Float64bits(x)
	sign := uint16(bits>>63) << 15
	biasedExp := int(bits>>fracBits) & 0x7ff
	frac := bits & (1<<fracBits - 1)
	infBits := uint16(1<<expBits-1) << manBits
	switch biasedExp {
	case 0x7ff:
		if frac == 0 {
			return sign | infBits
		}
		return sign | infBits | 1<<(manBits-1) | uint16(frac>>(fracBits-manBits))
	case 0:
		// Zero or a float64 subnormal: far below half the smallest
		// 16-bit subnormal, so it rounds to a zero of the same sign.
		return sign
	}
	bias := 1<<(expBits-1) - 1
	exp := biasedExp - 1023
	if exp > bias {
		return sign | infBits
	}
	sig := frac | 1<<fracBits
	shift := fracBits - manBits
	if exp < 1-bias {
		shift += uint(1 - bias - exp) // the result is subnormal
	}
	if shift > fracBits+1 {
		return sign // below half the smallest subnormal
	}
	q := roundShift64(sig, shift)
	out := q // a subnormal's field is its significand
	if exp >= 1-bias {
		// q includes the implicit bit, which adds one to the exponent
		// field; a carry out of the significand adds one more.
		out += uint64(exp+bias-1) << manBits
	}
	if out >= uint64(infBits) {
		return sign | infBits
	}
	return sign | uint16(out)
}

// roundShift64 returns v / 2^shift rounded to nearest, ties to even.
// shift must be in [1, 63].
func roundShift64(v uint64, shift uint) uint64 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}

// roundShift32 is roundShift64 for 32-bit values; shift must be in [1, 31].
func roundShift32(v uint32, shift uint) uint32 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}
