package bench

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/gocoll/gocoll/collective/dtype"
)

// codec writes exact values as little-endian elements of one data type.
type codec struct {
	size int
	put  func(b []byte, v scalar) // writes v into b[:size]
}

// codecOf returns the codec of t, which must be valid. Integer types
// divide with truncation toward zero and floating-point types round a
// quotient once to nearest even, as the Avg of [reduce.DivideBy] does.
func codecOf(t dtype.DataType) codec {
	c := codec{size: t.Size()}
	switch t {
	case dtype.Float32:
		c.put = func(b []byte, v scalar) {
			f := float32(v.num)
			if v.den > 1 {
				f /= float32(v.den)
			}
			binary.LittleEndian.PutUint32(b, math.Float32bits(f))
		}
	case dtype.Float64:
		c.put = func(b []byte, v scalar) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(float64(v.num)/float64(v.den)))
		}
	case dtype.BFloat16Type:
		c.put = func(b []byte, v scalar) {
			binary.LittleEndian.PutUint16(b, uint16(dtype.BFloat16FromFloat64(float64(v.num)/float64(v.den))))
		}
	case dtype.Float16Type:
		c.put = func(b []byte, v scalar) {
			binary.LittleEndian.PutUint16(b, uint16(dtype.Float16FromFloat64(float64(v.num)/float64(v.den))))
		}
	case dtype.Float8E4M3Type:
		c.put = func(b []byte, v scalar) {
			b[0] = uint8(dtype.Float8E4M3FromFloat64(float64(v.num) / float64(v.den)))
		}
	case dtype.Float8E5M2Type:
		c.put = func(b []byte, v scalar) {
			b[0] = uint8(dtype.Float8E5M2FromFloat64(float64(v.num) / float64(v.den)))
		}
	default:
		c.put = func(b []byte, v scalar) {
			x := uint64(v.num / v.den)
			for k := range c.size {
				b[k] = byte(x >> (8 * k))
			}
		}
	}
	return c
}

// fill writes element j of buf as the integer value(j).
func (c codec) fill(buf []byte, value func(j int64) int64) {
	for j := int64(0); int(j+1)*c.size <= len(buf); j++ {
		c.put(buf[int(j)*c.size:], scalar{num: value(j), den: 1})
	}
}

// countWrong returns how many elements of buf differ, bit for bit, from
// want(j).
func (c codec) countWrong(buf []byte, want func(j int64) scalar) int64 {
	var tmp [8]byte
	var wrong int64
	for j := int64(0); int(j+1)*c.size <= len(buf); j++ {
		c.put(tmp[:], want(j))
		off := int(j) * c.size
		if !bytes.Equal(buf[off:off+c.size], tmp[:c.size]) {
			wrong++
		}
	}
	return wrong
}

// poison fills buf with poisonByte.
func poison(buf []byte) {
	for i := range buf {
		buf[i] = poisonByte
	}
}
