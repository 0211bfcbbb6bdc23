package reduce

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/stretchr/testify/require"
)

var divisors = intsThatFit(1, 2, 3, 7, 8, 100, 127, 128, 129, 255, 256, 1000, 2047, 2048, 3001, 1<<20, 1<<24+1, 1<<40, math.MaxInt)

// intsThatFit returns the ns that an int holds: all on 64-bit platforms,
// those below 2^31 on 32-bit ones (GOARCH=386 go vet builds the tests).
func intsThatFit(ns ...int64) []int {
	var out []int
	for _, n := range ns {
		if int64(int(n)) == n {
			out = append(out, int(n))
		}
	}
	return out
}

// referenceDivide divides element by element: integers with big.Int's
// truncating Quo, floats in float64 and rounded once. For the 16-bit types
// that is the exactly rounded quotient for n < 2^40: a quotient x/n that is
// not a midpoint m of the target format differs from it by at least 2^-13/n
// relative, which float64's rounding (2^-53) cannot close.
func referenceDivide(t dtype.DataType, buf []byte, n int) []byte {
	size := t.Size()
	out := make([]byte, len(buf))
	for off := 0; off < len(buf); off += size {
		x, r := buf[off:off+size], out[off:off+size]
		if t.IsFloat() {
			encodeFloat(t, r, decodeFloat(t, x)/float64(n))
			continue
		}
		encodeInt(t, r, new(big.Int).Quo(decodeInt(t, x), big.NewInt(int64(n))))
	}
	return out
}

func TestDivideByMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dt := range dtype.All() {
		buf, _ := randomPair(rng, dt, 1023)
		for _, n := range divisors {
			got := clone(buf)
			require.NoError(t, DivideBy(dt, got, n))
			requireSameElements(t, dt, fmt.Sprintf("%v / %d", dt, n), got, referenceDivide(dt, buf, n))
		}
	}
}

// TestDivideByHalfAllPatterns divides every 16-bit pattern by divisors on
// both sides of the float32/float64 switch.
func TestDivideByHalfAllPatterns(t *testing.T) {
	all := make([]byte, 2<<16)
	for i := 0; i < 1<<16; i++ {
		le.PutUint16(all[2*i:], uint16(i))
	}
	for _, dt := range []dtype.DataType{dtype.BFloat16Type, dtype.Float16Type} {
		for _, n := range []int{2, 3, 5, 7, 10, 11, 100, 999, 2047, 2048, 12345} {
			got := clone(all)
			require.NoError(t, DivideBy(dt, got, n))
			requireSameElements(t, dt, fmt.Sprintf("%v / %d", dt, n), got, referenceDivide(dt, all, n))
		}
	}
}

func TestDivideByExamples(t *testing.T) {
	ints := []byte{0xf9, 7, 0x80, 0x7f} // int8: -7, 7, -128, 127
	require.NoError(t, DivideBy(dtype.Int8, ints, 2))
	require.Equal(t, []byte{0xfd, 3, 0xc0, 0x3f}, ints) // -3, 3, -64, 63: toward zero
	u := []byte{255, 1}
	require.NoError(t, DivideBy(dtype.Uint8, u, 300))
	require.Equal(t, []byte{0, 0}, u)
	i8 := []byte{0x80}
	require.NoError(t, DivideBy(dtype.Int8, i8, 128))
	require.Equal(t, []byte{0xff}, i8) // -128/128 = -1
}

func TestDivideByMisaligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, dt := range dtype.All() {
		buf, _ := randomPair(rng, dt, 2500)
		mis := make([]byte, len(buf)+1)[1:]
		copy(mis, buf)
		require.NoError(t, DivideBy(dt, mis, 3))
		requireSameElements(t, dt, dt.String()+" misaligned", mis, referenceDivide(dt, buf, 3))
	}
}

func TestDivideByRejectsBadArguments(t *testing.T) {
	err := DivideBy(dtype.Invalid, nil, 2)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, "invalid")
	err = DivideBy(dtype.Float32, make([]byte, 8), 0)
	require.ErrorIs(t, err, ErrDivisor)
	require.ErrorContains(t, err, "n=0")
	require.ErrorIs(t, DivideBy(dtype.Int64, make([]byte, 8), -3), ErrDivisor)
	err = DivideBy(dtype.Float64, make([]byte, 12), 2)
	require.ErrorIs(t, err, ErrLength)
	require.ErrorContains(t, err, "12 bytes")
	require.NoError(t, DivideBy(dtype.Float64, nil, 5))
}
