package dtype_test

import (
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
)

func Example() {
	h := dtype.Float16FromFloat64(0.1) // rounds to the nearest binary16
	fmt.Println(h, h.Float64())
	b := dtype.BFloat16FromFloat32(1 + 1.0/256) // a tie: rounds to even
	fmt.Println(b, uint16(b))
	fmt.Println(dtype.Float16FromFloat32(70000)) // beyond 65504: overflows
	dt, _ := dtype.Parse("bf16")
	fmt.Println(dt, dt.Size())
	// Output:
	// 0.1 0.0999755859375
	// 1 16256
	// +Inf
	// bfloat16 2
}
