package transporttest_test

import (
	"fmt"

	"github.com/gocoll/gocoll/transport/transporttest"
)

// Pattern and Verify let a transport test check that a message arrived
// intact: the sender fills its buffer from a seed and the receiver checks it.
func ExampleVerify() {
	msg := transporttest.Pattern(1024, 42)
	fmt.Println(transporttest.Verify(msg, 42))
	msg[100] ^= 1
	fmt.Println(transporttest.Verify(msg, 42))
	// Output:
	// <nil>
	// pattern 42: 1024-byte buffer differs first at offset 100
}
