package collectivetest

import (
	"encoding/binary"
	"math"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// Inputs are small integers chosen per operation so that every result is
// exact in every data type (as nccl-tests does): sums stay within bfloat16's
// 8-bit significand, products are powers of two within float16's range.
// The fp8 types (integers exact only up to 16 in E4M3, 8 in E5M2) sum
// values in [-2, 2] on at most 4 of 16 ranks, so every partial sum is
// exact.

// inputValue is element i of rank r's input for op.
func inputValue(dt dtype.DataType, op reduce.Op, r, i int) float64 {
	signed := dt.IsFloat() || dt == dtype.Int8 || dt == dtype.Int32 || dt == dtype.Int64
	switch op {
	case reduce.Prod:
		v := 1.0
		if (r+i)%5 == 0 {
			v = 2
		}
		if signed && (r*i)%3 == 1 {
			v = -v
		}
		return v
	case reduce.Min, reduce.Max:
		v := float64((r*13+i*5)%17) - 8
		if !signed {
			v += 8
		}
		return v
	default: // Sum, Avg, and data for non-reducing collectives
		if dt == dtype.Float8E4M3Type || dt == dtype.Float8E5M2Type {
			if (r+i)%4 != 0 {
				return 0
			}
			return float64((r*3+i*7)%5) - 2
		}
		v := float64((r*3+i*7)%9) - 4
		if !signed {
			v += 4
		}
		return v
	}
}

// encode writes v as element i of buf, wrapping integers to the type's width.
func encode(dt dtype.DataType, buf []byte, i int, v float64) {
	s := dt.Size()
	b := buf[i*s : (i+1)*s]
	switch dt {
	case dtype.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case dtype.Float64:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	case dtype.BFloat16Type:
		binary.LittleEndian.PutUint16(b, uint16(dtype.BFloat16FromFloat64(v)))
	case dtype.Float16Type:
		binary.LittleEndian.PutUint16(b, uint16(dtype.Float16FromFloat64(v)))
	case dtype.Float8E4M3Type:
		b[0] = uint8(dtype.Float8E4M3FromFloat64(v))
	case dtype.Float8E5M2Type:
		b[0] = uint8(dtype.Float8E5M2FromFloat64(v))
	case dtype.Int8, dtype.Uint8:
		b[0] = byte(int64(v))
	case dtype.Int32, dtype.Uint32:
		binary.LittleEndian.PutUint32(b, uint32(int64(v)))
	case dtype.Int64, dtype.Uint64:
		binary.LittleEndian.PutUint64(b, uint64(int64(v)))
	}
}

// decode reads element i of buf as a float64 (integers exactly, as values
// here stay far below 2^53).
func decode(dt dtype.DataType, buf []byte, i int) float64 {
	s := dt.Size()
	b := buf[i*s : (i+1)*s]
	switch dt {
	case dtype.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case dtype.Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case dtype.BFloat16Type:
		return dtype.BFloat16(binary.LittleEndian.Uint16(b)).Float64()
	case dtype.Float16Type:
		return dtype.Float16(binary.LittleEndian.Uint16(b)).Float64()
	case dtype.Float8E4M3Type:
		return dtype.Float8E4M3(b[0]).Float64()
	case dtype.Float8E5M2Type:
		return dtype.Float8E5M2(b[0]).Float64()
	case dtype.Int8:
		return float64(int8(b[0]))
	case dtype.Uint8:
		return float64(b[0])
	case dtype.Int32:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case dtype.Uint32:
		return float64(binary.LittleEndian.Uint32(b))
	case dtype.Int64:
		return float64(int64(binary.LittleEndian.Uint64(b)))
	case dtype.Uint64:
		return float64(binary.LittleEndian.Uint64(b))
	}
	return math.NaN()
}

// input returns rank r's input of count elements for op.
func input(dt dtype.DataType, op reduce.Op, r, count int) []byte {
	buf := make([]byte, count*dt.Size())
	for i := 0; i < count; i++ {
		encode(dt, buf, i, inputValue(dt, op, r, i))
	}
	return buf
}

// reference is the naive reduction of n ranks' inputs, element by element,
// in float64, then stored in dt (wrapping integers) and, for Avg, divided
// the way the data type's Avg is defined.
func reference(dt dtype.DataType, op reduce.Op, n, count int) []byte {
	out := make([]byte, count*dt.Size())
	for i := 0; i < count; i++ {
		acc := inputValue(dt, op, 0, i)
		for r := 1; r < n; r++ {
			v := inputValue(dt, op, r, i)
			switch op {
			case reduce.Prod:
				acc *= v
			case reduce.Min:
				acc = math.Min(acc, v)
			case reduce.Max:
				acc = math.Max(acc, v)
			default:
				acc += v
			}
		}
		encode(dt, out, i, acc)
		if op == reduce.Avg {
			encode(dt, out, i, average(dt, decode(dt, out, i), n))
		}
	}
	return out
}

// average divides a stored sum by n as Avg defines it for dt: truncating for
// integers, one rounding in the type for float32/float64, float32
// division then rounding for the 16-bit types, and float64 division then
// rounding for the fp8 types.
func average(dt dtype.DataType, sum float64, n int) float64 {
	switch dt {
	case dtype.Float32, dtype.BFloat16Type, dtype.Float16Type:
		return float64(float32(sum) / float32(n))
	case dtype.Float64, dtype.Float8E4M3Type, dtype.Float8E5M2Type:
		return sum / float64(n)
	default:
		return math.Trunc(sum / float64(n))
	}
}
