package collectivetest

import (
	"context"
	"sync"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
)

// BenchAllReduce measures a float32 Avg AllReduce of size bytes on every
// rank of eps (one communicator each, default Config), every rank a
// goroutine. It reports nccl-tests' bus bandwidth (busbw = size/time *
// 2(n-1)/n), the time per operation and the process's CPU time per
// operation. Two untimed operations first fault in every buffer.
func BenchAllReduce(b *testing.B, eps []transport.Endpoint, size int) {
	BenchAllReduceConfig(b, eps, size, collective.Config{})
}

// BenchAllReduceConfig is BenchAllReduce with communicators of cfg (to
// force an algorithm, for one).
func BenchAllReduceConfig(b *testing.B, eps []transport.Endpoint, size int, cfg collective.Config) {
	n := len(eps)
	comms := make([]*collective.Comm, n)
	for r, ep := range eps {
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
			wg.Go(func() {
				for range iters {
					if err := collective.AllReduce(ctx, c, bufs[r], bufs[r], collective.Avg); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	run(2)
	b.SetBytes(int64(size))
	b.ResetTimer()
	cpu0 := CPUTime()
	run(b.N)
	b.StopTimer()
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(size)/sec/1e9*2*float64(n-1)/float64(n), "busbw_GB/s")
	b.ReportMetric(sec*1e6, "us/op")
	b.ReportMetric((CPUTime()-cpu0).Seconds()/float64(b.N)*1e6, "cpu-us/op")
}
