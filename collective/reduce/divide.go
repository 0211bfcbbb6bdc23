package reduce

import (
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
)

// DivideBy divides every element of buf, of data type t, by n in place: the
// last step of Avg after the sum of n contributions. Integers use Go's
// truncating division (toward zero). float32 and float64 divide with one
// rounding (exactly for n up to 2^24 and 2^53). bfloat16 and float16 divide
// in float32 and round once to nearest even, which is the exactly rounded
// quotient for n < 2^11; larger n divide in float64, exact for n < 2^40.
// The fp8 types divide in float64 and round once more, exactly for
// n < 2^40 (an E4M3 quotient never reaches 448, so never saturates).
// It returns an error if t is invalid (ErrUnsupported), n < 1 (ErrDivisor)
// or len(buf) is not a multiple of t's size (ErrLength). buf may have any
// alignment.
func DivideBy(t dtype.DataType, buf []byte, n int) error {
	if !t.Valid() {
		return fmt.Errorf("%w: cannot divide data type %v", ErrUnsupported, t)
	}
	if n < 1 {
		return fmt.Errorf("%w: DivideBy(%v, n=%d)", ErrDivisor, t, n)
	}
	if len(buf)%t.Size() != 0 {
		return fmt.Errorf("%w: %v: %d bytes is not a whole number of %d-byte elements",
			ErrLength, t, len(buf), t.Size())
	}
	if n == 1 {
		return nil
	}
	switch t {
	case dtype.Int8:
		inPlaceTyped(buf, func(s []int8) { divideSigned(s, n) })
	case dtype.Int32:
		inPlaceTyped(buf, func(s []int32) { divideSigned(s, n) })
	case dtype.Int64:
		inPlaceTyped(buf, func(s []int64) { divideSigned(s, n) })
	case dtype.Uint8:
		inPlaceTyped(buf, func(s []uint8) { divideUnsigned(s, n) })
	case dtype.Uint32:
		inPlaceTyped(buf, func(s []uint32) { divideUnsigned(s, n) })
	case dtype.Uint64:
		inPlaceTyped(buf, func(s []uint64) { divideUnsigned(s, n) })
	case dtype.Float32:
		inPlaceTyped(buf, func(s []float32) { divideFloat32(s, n) })
	case dtype.Float64:
		inPlaceTyped(buf, func(s []float64) {
			d := float64(n)
			for i := range s {
				s[i] /= d
			}
		})
	case dtype.BFloat16Type:
		inPlaceTyped(buf, func(s []dtype.BFloat16) { divideBFloat16(s, n) })
	case dtype.Float16Type:
		inPlaceTyped(buf, func(s []dtype.Float16) { divideFloat16(s, n) })
	case dtype.Float8E4M3Type:
		divideFloat8(view[dtype.Float8E4M3](buf), n, dtype.Float8E4M3.Float64, dtype.Float8E4M3FromFloat64)
	case dtype.Float8E5M2Type:
		divideFloat8(view[dtype.Float8E5M2](buf), n, dtype.Float8E5M2.Float64, dtype.Float8E5M2FromFloat64)
	default:
		panic(fmt.Sprintf("reduce: DivideBy has no case for valid type %v", t))
	}
	return nil
}

// divideSigned divides in int64, where n (>= 1) and every quotient fit.
func divideSigned[T int8 | int32 | int64](s []T, n int) {
	d := int64(n)
	for i := range s {
		s[i] = T(int64(s[i]) / d)
	}
}

func divideUnsigned[T uint8 | uint32 | uint64](s []T, n int) {
	d := uint64(n)
	for i := range s {
		s[i] = T(uint64(s[i]) / d)
	}
}

func divideFloat32(s []float32, n int) {
	if n <= 1<<24 {
		d := float32(n) // exact
		for i := range s {
			s[i] /= d
		}
		return
	}
	d := float64(n)
	for i := range s {
		s[i] = float32(float64(s[i]) / d)
	}
}

// halfDivideFloat32Max bounds the divisors for which dividing a 16-bit
// float in float32 and rounding again gives the exactly rounded quotient
// (checked once for every pattern of both types and every n up to it;
// divide_test.go rechecks a sample of divisors on every run).
const halfDivideFloat32Max = 1<<11 - 1

func divideBFloat16(s []dtype.BFloat16, n int) {
	if n <= halfDivideFloat32Max {
		d := float32(n)
		for i := range s {
			s[i] = dtype.BFloat16FromFloat32(s[i].Float32() / d)
		}
		return
	}
	d := float64(n)
	for i := range s {
		s[i] = dtype.BFloat16FromFloat64(s[i].Float64() / d)
	}
}

func divideFloat16(s []dtype.Float16, n int) {
	if n <= halfDivideFloat32Max {
		d := float32(n)
		for i := range s {
			s[i] = dtype.Float16FromFloat32(s[i].Float32() / d)
		}
		return
	}
	d := float64(n)
	for i := range s {
		s[i] = dtype.Float16FromFloat64(s[i].Float64() / d)
	}
}
