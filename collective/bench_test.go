package collective_test

import (
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
)

// BenchmarkAllReduceInProcess measures a float32 Avg AllReduce over the
// in-process transport at 4 ranks from 1 KiB to 64 MiB, reporting
// nccl-tests' bus bandwidth: busbw = size/time * 2(n-1)/n.
func BenchmarkAllReduceInProcess(b *testing.B) {
	for size := 1 << 10; size <= 64<<20; size <<= 2 {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			collectivetest.BenchAllReduce(b, inprocWorld(b, 4), size)
		})
	}
}
