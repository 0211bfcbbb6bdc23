//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// benchWorld builds n shm ranks in this process for a benchmark, closed
// when it ends, as *shm.Endpoint and as transport.Endpoint.
func benchWorld(b *testing.B, n int) ([]*shm.Endpoint, []transport.Endpoint) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	tes := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		tes[i] = ep
		b.Cleanup(func() { _ = ep.Close() })
	}
	return eps, tes
}

// BenchmarkAllReduceSmall measures a float32 AllReduce of 8 B to 8 KiB over
// shared memory between 4 ranks in this process (bench/results/small_ops.md):
// time and CPU per operation (all ranks together), and per operation and
// rank the messages sent and the doorbells rung.
func BenchmarkAllReduceSmall(b *testing.B) {
	for _, size := range []int{8, 1 << 10, 8 << 10} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			eps, tes := benchWorld(b, 4)
			before := make([]shm.Stats, len(eps))
			for i, ep := range eps {
				before[i] = ep.Stats()
			}
			collectivetest.BenchAllReduce(b, tes, size)
			var msgs, wakes uint64
			for i, ep := range eps {
				s := ep.Stats()
				msgs += s.InlineSent + s.RendezvousSent - before[i].InlineSent - before[i].RendezvousSent
				wakes += s.Wakes - before[i].Wakes
			}
			per := float64(b.N+2) * float64(len(eps))
			b.ReportMetric(float64(msgs)/per, "msgs/op/rank")
			b.ReportMetric(float64(wakes)/per, "wakes/op/rank")
		})
	}
}
