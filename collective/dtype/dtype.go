// Package dtype names the element types gocoll collectives move and reduce,
// and provides the 16- and 8-bit floating-point types Go lacks: [BFloat16],
// [Float16], [Float8E4M3] and [Float8E5M2].
package dtype

import "fmt"

// DataType is the element type of a collective's buffers.
type DataType uint8

// The supported element types. The zero value is invalid.
const (
	Invalid DataType = iota
	Float32
	Float64
	BFloat16Type
	Float16Type
	Int8
	Uint8
	Int32
	Uint32
	Int64
	Uint64
	Float8E4M3Type // OFP8 E4M3, as NCCL's ncclFloat8e4m3
	Float8E5M2Type // OFP8 E5M2, as NCCL's ncclFloat8e5m2
	numTypes
)

var typeInfo = [numTypes]struct {
	name string
	size int
}{
	Invalid:      {"invalid", 0},
	Float32:      {"float32", 4},
	Float64:      {"float64", 8},
	BFloat16Type: {"bfloat16", 2},
	Float16Type:  {"float16", 2},
	Int8:         {"int8", 1},
	Uint8:        {"uint8", 1},
	Int32:        {"int32", 4},
	Uint32:       {"uint32", 4},
	Int64:        {"int64", 8},
	Uint64:       {"uint64", 8},
	// NCCL's names, ncclFloat8e4m3 and ncclFloat8e5m2, lower-cased.
	Float8E4M3Type: {"float8e4m3", 1},
	Float8E5M2Type: {"float8e5m2", 1},
}

// All lists every valid DataType.
func All() []DataType {
	out := make([]DataType, 0, numTypes-1)
	for t := Float32; t < numTypes; t++ {
		out = append(out, t)
	}
	return out
}

// Valid reports whether t is a supported element type.
func (t DataType) Valid() bool { return t > Invalid && t < numTypes }

// Size is the size of one element in bytes (0 for an invalid type).
func (t DataType) Size() int {
	if !t.Valid() {
		return 0
	}
	return typeInfo[t].size
}

// IsFloat reports whether t is a floating-point type.
func (t DataType) IsFloat() bool {
	switch t {
	case Float32, Float64, BFloat16Type, Float16Type, Float8E4M3Type, Float8E5M2Type:
		return true
	}
	return false
}

func (t DataType) String() string {
	if t < numTypes {
		return typeInfo[t].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// Parse returns the DataType named s (as printed by String; also the short
// names nccl-tests uses: float, double, bf16, half, fp16, int, uint,
// f8e4m3, f8e5m2, ...).
func Parse(s string) (DataType, error) {
	for t := Float32; t < numTypes; t++ {
		if typeInfo[t].name == s {
			return t, nil
		}
	}
	switch s {
	case "float", "f32", "fp32":
		return Float32, nil
	case "double", "f64", "fp64":
		return Float64, nil
	case "bf16":
		return BFloat16Type, nil
	case "half", "fp16", "f16":
		return Float16Type, nil
	case "int", "i32":
		return Int32, nil
	case "uint", "u32":
		return Uint32, nil
	case "i8", "char":
		return Int8, nil
	case "u8":
		return Uint8, nil
	case "i64":
		return Int64, nil
	case "u64":
		return Uint64, nil
	case "f8e4m3", "fp8e4m3", "e4m3":
		return Float8E4M3Type, nil
	case "f8e5m2", "fp8e5m2", "e5m2":
		return Float8E5M2Type, nil
	}
	return Invalid, fmt.Errorf("dtype: unknown data type %q", s)
}

// Element is the set of Go types a typed collective accepts. [Float8E4M3]
// and [Float8E5M2] are in it as ~uint8; [Of] tells them from uint8.
type Element interface {
	~float32 | ~float64 | BFloat16 | Float16 | ~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Of returns the DataType of the Go type T.
func Of[T Element]() DataType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case BFloat16:
		return BFloat16Type
	case Float16:
		return Float16Type
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int32:
		return Int32
	case uint32:
		return Uint32
	case int64:
		return Int64
	case uint64:
		return Uint64
	case Float8E4M3:
		return Float8E4M3Type
	case Float8E5M2:
		return Float8E5M2Type
	}
	return Invalid
}
