package reduce

import (
	"math"
	"math/rand/v2"

	"github.com/gocoll/gocoll/collective/dtype"
)

// randomPair returns two inputs of n elements of type t. Integers are
// random bits. Floats mix NaNs (quiet and signaling, both signs), ±Inf,
// ±0, extreme and subnormal values, random bit patterns, moderate values
// whose sums cancel or round at ties, and equal pairs (including +0 and -0)
// for min and max.
func randomPair(rng *rand.Rand, t dtype.DataType, n int) (a, b []byte) {
	size := t.Size()
	a, b = make([]byte, n*size), make([]byte, n*size)
	for i := 0; i < n; i++ {
		x, y := a[i*size:(i+1)*size], b[i*size:(i+1)*size]
		if !t.IsFloat() {
			fillRandom(rng, x)
			fillRandom(rng, y)
			continue
		}
		u, v := randomFloat(rng, t), randomFloat(rng, t)
		switch rng.IntN(10) {
		case 0:
			v = u
		case 1:
			u, v = math.Copysign(0, float64(rng.IntN(2)*2-1)), math.Copysign(0, float64(rng.IntN(2)*2-1))
		case 2:
			v = -u
		}
		putFloat(t, x, u, rng)
		putFloat(t, y, v, rng)
	}
	return a, b
}

func fillRandom(rng *rand.Rand, b []byte) {
	for len(b) >= 8 {
		le.PutUint64(b, rng.Uint64())
		b = b[8:]
	}
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// specials are values every float kernel must get right.
var specials = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1,
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0x1p-126,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 65504, 65520, 0x1p-24, 0x1p-14, 0x1p-133,
}

// randomFloat returns a value for randomFloat's caller to round to t; a
// result of math.Float64frombits(0x7ff...) stands for "random bits", see
// putFloat.
func randomFloat(rng *rand.Rand, t dtype.DataType) float64 {
	switch rng.IntN(8) {
	case 0:
		return specials[rng.IntN(len(specials))]
	case 1:
		return randomBitsMarker
	case 2: // small integers and halves: exact sums, ties in min/max
		return float64(rng.IntN(33)-16) / 2
	}
	exp := rng.IntN(40) - 20
	if t == dtype.BFloat16Type || t == dtype.Float32 {
		exp = rng.IntN(280) - 150
	} else if t == dtype.Float64 {
		exp = rng.IntN(2100) - 1075
	}
	return math.Ldexp(rng.Float64()*2-1, exp)
}

// randomBitsMarker asks putFloat for a random bit pattern (a NaN with a
// payload no special value uses).
var randomBitsMarker = math.Float64frombits(0x7ff0_dead_beef_0001)

// putFloat stores v rounded to t, or random bits (which include signaling
// and negative NaNs) for randomBitsMarker.
func putFloat(t dtype.DataType, b []byte, v float64, rng *rand.Rand) {
	if math.Float64bits(v) == math.Float64bits(randomBitsMarker) {
		fillRandom(rng, b)
		return
	}
	encodeFloat(t, b, v)
}
