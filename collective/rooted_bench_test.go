//go:build linux

package collective_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// BenchmarkRootedSmall measures an 8-byte Broadcast and Reduce (root 0) over
// 4 in-process shared-memory ranks, each rank calling in a loop: the fixed
// cost of a small rooted operation (issue 17 item 1). Besides the time it
// reports msgs/op, the messages all ranks sent per operation (the shm
// transport's counters), which the machine's load does not change.
func BenchmarkRootedSmall(b *testing.B) {
	calls := map[string]func(ctx context.Context, c *collective.Comm, x, y []float64) error{
		"Broadcast": func(ctx context.Context, c *collective.Comm, x, _ []float64) error {
			return collective.Broadcast(ctx, c, x, x, 0)
		},
		"Reduce": func(ctx context.Context, c *collective.Comm, x, y []float64) error {
			return collective.Reduce(ctx, c, x, y, collective.Sum, 0)
		},
	}
	for _, name := range []string{"Broadcast", "Reduce"} {
		call := calls[name]
		b.Run(name+"/bytes=8", func(b *testing.B) {
			const n = 4
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			comms := make([]*collective.Comm, n)
			for r, ep := range eps {
				b.Cleanup(func() { _ = ep.Close() })
				if comms[r], err = collective.New(ep, 1, collective.Config{}); err != nil {
					b.Fatal(err)
				}
			}
			run := func(iters int) {
				var wg sync.WaitGroup
				for r, c := range comms {
					wg.Go(func() {
						x, y := []float64{float64(r)}, []float64{0}
						for range iters {
							if err := call(context.Background(), c, x, y); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			sent := func() (m int64) {
				for _, ep := range eps {
					for _, p := range transport.StatsOf(ep).Peers {
						m += p.MsgsSent
					}
				}
				return m
			}
			run(10)
			m0 := sent()
			b.ResetTimer()
			run(b.N)
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6, "us/op")
			b.ReportMetric(float64(sent()-m0)/float64(b.N), "msgs/op")
		})
	}
}
