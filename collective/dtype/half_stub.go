package dtype

// BFloat16 is a bfloat16 number stored as its bit pattern (the upper half of
// an IEEE-754 binary32). Conversions are provided in bfloat16.go.
type BFloat16 uint16

// Float16 is an IEEE-754 binary16 number stored as its bit pattern.
// Conversions are provided in float16.go.
type Float16 uint16
