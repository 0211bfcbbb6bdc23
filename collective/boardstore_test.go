package collective

import (
	"sync/atomic"
	"testing"
)

// publish writes the word itself (an atomic.Uint64's only field), whole,
// and nothing beside it; a Load sees the value.
func TestPublish(t *testing.T) {
	var w [3]atomic.Uint64
	for _, v := range []uint64{1, 0xdeadbeefcafef00d, ^uint64(0), 0} {
		publish(&w[1], v)
		if w[1].Load() != v || w[0].Load() != 0 || w[2].Load() != 0 {
			t.Fatalf("publish(%#x): words %#x %#x %#x", v, w[0].Load(), w[1].Load(), w[2].Load())
		}
	}
}
