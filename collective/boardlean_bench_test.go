//go:build linux

package collective_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
)

// BenchmarkBoardSmall measures an 8-byte Broadcast (root 0, in place) and
// an 8-byte Sum AllReduce over 4 in-process shared-memory ranks on the
// board, each rank calling in a loop: the fixed cost of a small board
// call (issue 17 item 1). Besides the time it reports cpu-ns/op, the
// process's CPU time (getrusage, user and system) per call of the loop,
// which depends less on the host's load than the wall time does, and
// lean/call, the share of the ranks' calls that ran the lean way.
func BenchmarkBoardSmall(b *testing.B) {
	calls := map[string]func(ctx context.Context, c *collective.Comm, x, y []float64) error{
		"Broadcast": func(ctx context.Context, c *collective.Comm, x, _ []float64) error {
			return collective.Broadcast(ctx, c, x, x, 0)
		},
		"AllReduce": func(ctx context.Context, c *collective.Comm, x, y []float64) error {
			return collective.AllReduce(ctx, c, x, y, collective.Sum)
		},
	}
	for _, name := range []string{"Broadcast", "AllReduce"} {
		call := calls[name]
		b.Run(name+"/bytes=8", func(b *testing.B) {
			const n = 4
			comms, _ := shmComms(b, n, collective.Config{})
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
			cpu := collectivetest.CPUTime
			lean := func() (l uint64) {
				for _, c := range comms {
					l += c.BoardLeanCalls()
				}
				return l
			}
			run(100)
			c0, l0 := cpu(), lean()
			b.ResetTimer()
			run(b.N)
			b.StopTimer()
			b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(lean()-l0)/float64(n*b.N), "lean/call")
			if comms[0].BoardCalls() == 0 {
				b.Fatal("no call ran on the board")
			}
		})
	}
}
