package dtype

import "math"

// The 8-bit floats of OCP's OFP8 specification, as NCCL's ncclFloat8e4m3
// and ncclFloat8e5m2 and CUDA's __nv_fp8_e4m3 and __nv_fp8_e5m2 define
// them; collectives carry them as [Float8E4M3Type] and [Float8E5M2Type].

// Float8E4M3 is an OFP8 E4M3 number stored as its bit pattern: 1 sign bit,
// 4 exponent bits (bias 7), 3 significand bits. It has no infinities; the
// patterns S.1111.111 are NaN, the largest finite value is 448, the
// smallest normal 2^-6 and the smallest subnormal 2^-9. The zero value is
// +0.
type Float8E4M3 uint8

// Float8E5M2 is an OFP8 E5M2 number stored as its bit pattern: 1 sign bit,
// 5 exponent bits (bias 15), 2 significand bits, laid out like the upper
// byte of a [Float16]: IEEE infinities (S.11111.00) and NaNs, largest
// finite 57344, smallest normal 2^-14, smallest subnormal 2^-16. The zero
// value is +0.
type Float8E5M2 uint8

// fp8 describes one 8-bit format to the shared conversion code.
type fp8 struct {
	manBits, expBits uint
	maxCode          uint8 // the largest finite magnitude's pattern
}

var (
	e4m3 = fp8{manBits: 3, expBits: 4, maxCode: 0x7e}
	e5m2 = fp8{manBits: 2, expBits: 5, maxCode: 0x7b}
)

// Float8E4M3FromFloat32 rounds f to the nearest Float8E4M3, ties to even.
// Signed zeros are kept. As the format has no infinities, magnitudes at or
// beyond the midpoint between 448 and 480 (464, where the tie goes to the
// even 448) and ±Inf saturate to ±448, as CUDA's conversion with
// __NV_SATFINITE (the one NCCL's reductions use) does. A NaN becomes the
// NaN pattern with f's sign.
func Float8E4M3FromFloat32(f float32) Float8E4M3 {
	sign := uint8(math.Float32bits(f)>>24) & 0x80
	if f != f {
		return Float8E4M3(sign | 0x7f)
	}
	return Float8E4M3(sign | e4m3.saturatedCode(float64(f)))
}

// Float8E4M3FromFloat64 is [Float8E4M3FromFloat32] for a float64: one
// rounding to nearest even, saturating at ±448.
func Float8E4M3FromFloat64(f float64) Float8E4M3 {
	sign := uint8(math.Float64bits(f)>>56) & 0x80
	if f != f {
		return Float8E4M3(sign | 0x7f)
	}
	return Float8E4M3(sign | e4m3.saturatedCode(f))
}

func (p fp8) saturatedCode(f float64) uint8 {
	return uint8(min(p.magnitudeCode(f), uint64(p.maxCode)))
}

// Float8E5M2FromFloat32 rounds f to the nearest Float8E5M2, ties to even,
// IEEE style like [Float16FromFloat32]: signed zeros and infinities are
// kept, magnitudes at or beyond 61440 (the midpoint between 57344 and
// 2^16) become ±Inf, and a NaN becomes a quiet NaN with f's sign and the
// leading payload bit after f's quiet bit.
func Float8E5M2FromFloat32(f float32) Float8E5M2 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	if f != f {
		return Float8E5M2(sign | 0x7e | uint8(b>>21)&1)
	}
	return Float8E5M2(sign | e5m2.ieeeCode(float64(f)))
}

// Float8E5M2FromFloat64 is [Float8E5M2FromFloat32] for a float64: one
// rounding to nearest even; a NaN keeps the payload bit after its quiet
// bit.
func Float8E5M2FromFloat64(f float64) Float8E5M2 {
	b := math.Float64bits(f)
	sign := uint8(b>>56) & 0x80
	if f != f {
		return Float8E5M2(sign | 0x7e | uint8(b>>50)&1)
	}
	return Float8E5M2(sign | e5m2.ieeeCode(f))
}

// ieeeCode is magnitudeCode with overflow to the infinity pattern.
func (p fp8) ieeeCode(f float64) uint8 {
	return uint8(min(p.magnitudeCode(f), uint64(p.maxCode)+1))
}

// magnitudeCode returns |f| (not NaN) rounded to nearest even in the
// format extended without bound above: the pattern of the result's
// magnitude, which may exceed the format's range (Inf gives a large one).
// Patterns are ordered like the values, so a carry out of the significand
// is the next binade's pattern.
func (p fp8) magnitudeCode(f float64) uint64 {
	x := math.Abs(f)
	if x == 0 {
		return 0
	}
	if math.IsInf(x, 0) {
		return math.MaxUint16
	}
	minExp := 2 - 1<<(p.expBits-1) // the exponent of the smallest normal
	_, e := math.Frexp(x)          // x = frac * 2^e, frac in [0.5, 1)
	e--
	if e < minExp {
		e = minExp // subnormal: the smallest normal's spacing
	}
	if e > 40 {
		return math.MaxUint16 // far beyond any 8-bit format's range
	}
	// q is x in units of the spacing at e, exact in float64.
	q := math.RoundToEven(math.Ldexp(x, int(p.manBits)-e))
	return uint64(e-minExp)<<p.manBits + uint64(q)
}

// Float32 returns h as a float32, exactly. The NaN patterns give a quiet
// NaN with h's sign.
func (h Float8E4M3) Float32() float32 { return e4m3Values[h] }

// Float64 returns h as a float64, exactly (a NaN as Float32's, widened).
func (h Float8E4M3) Float64() float64 { return float64(e4m3Values[h]) }

// Float64 returns h as a float64, exactly (a NaN as Float32's, widened).
func (h Float8E5M2) Float64() float64 { return float64(e5m2Values[h]) }

// Float32 returns h as a float32, exactly. A NaN keeps its sign and its
// significand bits in float32's leading payload bits (a signaling NaN
// stays signaling).
func (h Float8E5M2) Float32() float32 { return e5m2Values[h] }

// IsNaN reports whether h is a NaN.
func (h Float8E4M3) IsNaN() bool { return h&0x7f == 0x7f }

// IsNaN reports whether h is a NaN.
func (h Float8E5M2) IsNaN() bool { return h&0x7f > 0x7c }

// The widenings are tables of all 256 patterns.
var e4m3Values, e5m2Values = widenTable(e4m3), widenTable(e5m2)

func widenTable(p fp8) (t [256]float32) {
	bias := 1<<(p.expBits-1) - 1
	for c := range 256 {
		sign := uint32(c&0x80) << 24
		exp := c >> p.manBits & (1<<p.expBits - 1)
		man := c & (1<<p.manBits - 1)
		var v float64
		switch {
		case p.expBits == 4 && c&0x7f == 0x7f: // E4M3 NaN
			t[c] = math.Float32frombits(sign | 0x7fc00000)
			continue
		case p.expBits == 5 && exp == 0x1f: // E5M2 Inf or NaN
			t[c] = math.Float32frombits(sign | 0x7f800000 | uint32(man)<<21)
			continue
		case exp == 0:
			v = math.Ldexp(float64(man), 1-bias-int(p.manBits))
		default:
			v = math.Ldexp(float64(1<<p.manBits+man), exp-bias-int(p.manBits))
		}
		t[c] = math.Float32frombits(sign | math.Float32bits(float32(v)))
	}
	return t
}
