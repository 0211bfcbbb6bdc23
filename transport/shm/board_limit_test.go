//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardDefaultLimits: with shm's and collective's defaults an
// AllReduce (DefaultBoardBytes) and a Broadcast (DefaultBoardBroadcastBytes)
// of 256 KiB at 4 ranks run on the board after the set-up call (shm's
// default board's slots hold them; above DefaultBoardSplitBytes the
// AllReduce folds in shards), with new data on every rank every call
// (and the Broadcast from each root in turn), so that every slot they use
// is rewritten with other bytes, every rank's values right; one element
// more takes the point-to-point path, its values right too.
func TestBoardDefaultLimits(t *testing.T) {
	const n, calls = 4, 9
	count := 256 << 10 / 8
	// value is rank r's input (AllReduce) or the root's (Broadcast, r the
	// root) at element i of a call.
	value := func(call, r, i int) int64 { return int64(call)<<40 | int64(r+1)<<32 | int64(i) }
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, call, r int, c *collective.Comm, out []int64) error
		want func(call, i int) int64
	}{
		{"AllReduce", func(ctx context.Context, call, r int, c *collective.Comm, out []int64) error {
			in := make([]int64, len(out))
			for i := range in {
				in[i] = value(call, r, i)
			}
			return collective.AllReduce(ctx, c, in, out, collective.Sum)
		}, func(call, i int) int64 {
			var sum int64
			for q := range n {
				sum += value(call, q, i)
			}
			return sum
		}},
		{"Broadcast", func(ctx context.Context, call, r int, c *collective.Comm, out []int64) error {
			root := call % n
			if r == root {
				for i := range out {
					out[i] = value(call, root, i)
				}
			}
			return collective.Broadcast(ctx, c, out, out, root)
		}, func(call, i int) int64 { return value(call, call%n, i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comms := boardComms(t, n, shm.Config{}, collective.Config{})
			call := func(call, count int) {
				t.Helper()
				outs, errs := onEveryRank(comms, same(n, count), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, out []int64) error {
					return tc.run(ctx, call, r, c, out)
				})
				for r := range n {
					if errs[r] != nil {
						t.Fatalf("call %d (%d elements), rank %d: %v", call, count, r, errs[r])
					}
					for i, v := range outs[r] {
						if want := tc.want(call, i); v != want {
							t.Fatalf("call %d (%d elements), rank %d: [%d] = %#x, want %#x", call, count, r, i, v, want)
						}
					}
				}
			}
			for c := range calls {
				call(c, count)
			}
			for r, c := range comms {
				if got := c.BoardCalls(); got != calls-1 {
					t.Fatalf("rank %d: %d calls of %d bytes on the board, want %d (all but the set-up call)", r, got, 8*count, calls-1)
				}
			}
			call(calls, count+1)
			for r, c := range comms {
				if got := c.BoardCalls(); got != calls-1 {
					t.Fatalf("rank %d: a call of %d bytes ran on the board (%d calls there, want %d)", r, 8*(count+1), got, calls-1)
				}
			}
		})
	}
}
