package reduce_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// float32s encodes values as little-endian float32 bytes, the wire form.
func float32s(values ...float32) []byte {
	b := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func decode(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// Example averages the contributions of three ranks the way an allreduce
// does: reduce in place into an accumulator, then divide once.
func Example() {
	acc := float32s(1, 2, 3)
	received := [][]byte{float32s(10, 20, 30), float32s(100, 200, 300)}

	sum, err := reduce.Lookup(dtype.Float32, reduce.Avg) // Avg reduces like Sum
	if err != nil {
		panic(err)
	}
	for _, in := range received {
		sum(acc, acc, in) // in place: dst is a
	}
	if err := reduce.DivideBy(dtype.Float32, acc, 1+len(received)); err != nil {
		panic(err)
	}
	fmt.Println(decode(acc))

	// Apply checks its arguments instead of panicking.
	err = reduce.Apply(dtype.Float32, reduce.Max, acc, acc, float32s(1))
	fmt.Println(err)
	// Output:
	// [37 74 111]
	// reduce: bad buffer length: float32 max: len(dst)=12, len(a)=12, len(b)=4
}
