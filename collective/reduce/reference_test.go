package reduce

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
)

// This file is the naive reference the kernels are checked against: one
// element at a time, decoded with encoding/binary, floats computed in
// float64 and integers in math/big.

var le = binary.LittleEndian

// reference returns a op b over data type t, element by element.
func reference(t dtype.DataType, op Op, a, b []byte) []byte {
	size := t.Size()
	out := make([]byte, len(a))
	for off := 0; off < len(a); off += size {
		x, y, r := a[off:off+size], b[off:off+size], out[off:off+size]
		switch {
		case t.IsFloat():
			encodeFloat(t, r, refFloat(op, decodeFloat(t, x), decodeFloat(t, y)))
		default:
			encodeInt(t, r, refInt(op, decodeInt(t, x), decodeInt(t, y)))
		}
	}
	return out
}

// decodeFloat returns the exact value of one float element.
func decodeFloat(t dtype.DataType, b []byte) float64 {
	switch t {
	case dtype.Float32:
		return float64(math.Float32frombits(le.Uint32(b)))
	case dtype.Float64:
		return math.Float64frombits(le.Uint64(b))
	case dtype.BFloat16Type:
		return dtype.BFloat16(le.Uint16(b)).Float64()
	case dtype.Float16Type:
		return dtype.Float16(le.Uint16(b)).Float64()
	case dtype.Float8E4M3Type:
		return dtype.Float8E4M3(b[0]).Float64()
	case dtype.Float8E5M2Type:
		return dtype.Float8E5M2(b[0]).Float64()
	}
	panic("not a float type: " + t.String())
}

// encodeFloat rounds v once to t and stores it.
func encodeFloat(t dtype.DataType, b []byte, v float64) {
	switch t {
	case dtype.Float32:
		le.PutUint32(b, math.Float32bits(float32(v)))
	case dtype.Float64:
		le.PutUint64(b, math.Float64bits(v))
	case dtype.BFloat16Type:
		le.PutUint16(b, uint16(dtype.BFloat16FromFloat64(v)))
	case dtype.Float16Type:
		le.PutUint16(b, uint16(dtype.Float16FromFloat64(v)))
	case dtype.Float8E4M3Type:
		b[0] = uint8(dtype.Float8E4M3FromFloat64(v))
	case dtype.Float8E5M2Type:
		b[0] = uint8(dtype.Float8E5M2FromFloat64(v))
	}
}

// refFloat computes x op y in float64. For the narrower types, which the
// caller rounds once more, this is the exactly rounded result: float64 has
// more than twice their precision plus two bits.
func refFloat(op Op, x, y float64) float64 {
	switch op {
	case Sum, Avg:
		return x + y
	case Prod:
		return x * y
	case Min, Max:
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		if x == y { // equal, or +0 and -0
			negative := math.Signbit(x) || math.Signbit(y)
			if op == Max {
				negative = math.Signbit(x) && math.Signbit(y)
			}
			if negative {
				return -math.Abs(x)
			}
			return math.Abs(x)
		}
		if (x < y) == (op == Min) {
			return x
		}
		return y
	}
	panic("bad op")
}

func decodeInt(t dtype.DataType, b []byte) *big.Int {
	switch t {
	case dtype.Int8:
		return big.NewInt(int64(int8(b[0])))
	case dtype.Uint8:
		return big.NewInt(int64(b[0]))
	case dtype.Int32:
		return big.NewInt(int64(int32(le.Uint32(b))))
	case dtype.Uint32:
		return big.NewInt(int64(le.Uint32(b)))
	case dtype.Int64:
		return big.NewInt(int64(le.Uint64(b)))
	case dtype.Uint64:
		return new(big.Int).SetUint64(le.Uint64(b))
	}
	panic("not an integer type: " + t.String())
}

// encodeInt stores v modulo 2^bits (two's complement wrap-around).
func encodeInt(t dtype.DataType, b []byte, v *big.Int) {
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*t.Size()))
	w := new(big.Int).Mod(v, mod).Uint64()
	for i := range b {
		b[i] = byte(w >> (8 * i))
	}
}

func refInt(op Op, x, y *big.Int) *big.Int {
	switch op {
	case Sum, Avg:
		return new(big.Int).Add(x, y)
	case Prod:
		return new(big.Int).Mul(x, y)
	case Min:
		if x.Cmp(y) <= 0 {
			return x
		}
		return y
	case Max:
		if x.Cmp(y) >= 0 {
			return x
		}
		return y
	}
	panic("bad op")
}

// requireSameElements fails t unless got and want are equal element by
// element, where for float types any NaN matches any NaN.
func requireSameElements(t *testing.T, dt dtype.DataType, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	size := dt.Size()
	for off := 0; off < len(got); off += size {
		g, w := got[off:off+size], want[off:off+size]
		if string(g) == string(w) {
			continue
		}
		if dt.IsFloat() && math.IsNaN(decodeFloat(dt, g)) && math.IsNaN(decodeFloat(dt, w)) {
			continue
		}
		t.Fatalf("%s: element %d: got %x, want %x", what, off/size, g, w)
	}
}
