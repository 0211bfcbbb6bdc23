package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gocoll/gocoll/collective"
)

// BenchmarkAllReduceInProcess measures a float32 Sum AllReduce over the
// in-process transport at 4 ranks, reporting nccl-tests' bus bandwidth:
// busbw = size/time * 2(n-1)/n.
func BenchmarkAllReduceInProcess(b *testing.B) {
	const n = 4
	for size := 1 << 10; size <= 64<<20; size <<= 2 {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			benchAllReduce(b, n, size, collective.Config{})
		})
	}
}

func benchAllReduce(b *testing.B, n, size int, cfg collective.Config) {
	comms := make([]*collective.Comm, n)
	for r, ep := range inprocWorld(b, n) {
		c, err := collective.New(ep, 1, cfg)
		if err != nil {
			b.Fatal(err)
		}
		comms[r] = c
	}
	bufs := make([][]float32, n)
	for r := range bufs {
		bufs[r] = make([]float32, size/4)
		for i := range bufs[r] {
			bufs[r][i] = float32(i % 7)
		}
	}
	ctx := context.Background()
	run := func(iters int) {
		var wg sync.WaitGroup
		for r, c := range comms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < iters; i++ {
					if err := collective.AllReduce(ctx, c, bufs[r], bufs[r], collective.Avg); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	run(2) // warm up: fault in pages and scratch buffers
	b.SetBytes(int64(size))
	b.ResetTimer()
	run(b.N)
	b.StopTimer()
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(size)/sec/1e9, "algbw_GB/s")
	b.ReportMetric(float64(size)/sec/1e9*2*float64(n-1)/float64(n), "busbw_GB/s")
	b.ReportMetric(sec*1e6, "us/op")
}
