//go:build linux

package collective_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
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
			comms, eps := shmComms(b, n, collective.Config{})
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
