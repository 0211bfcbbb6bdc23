package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardAllReduceDefaultLimit: with shm's and collective's defaults an
// AllReduce of 256 KiB (DefaultBoardBytes) at 4 ranks runs on the board
// after the set-up call (shm's default board's slots hold it; above
// DefaultBoardSplitBytes it folds in shards), with new data on every rank
// every call, so that every slot it uses is rewritten with other bytes,
// every rank's sums right; one element more takes the point-to-point
// path, its sums right too.
func TestBoardAllReduceDefaultLimit(t *testing.T) {
	const n, calls = 4, 9
	count := 256 << 10 / 8
	comms := boardComms(t, n, shm.Config{}, collective.Config{})
	value := func(call, r, i int) int64 { return int64(call)<<40 | int64(r+1)<<32 | int64(i) }
	allreduce := func(call, count int) {
		t.Helper()
		outs, errs := onEveryRank(comms, same(n, count), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, out []int64) error {
			in := make([]int64, len(out))
			for i := range in {
				in[i] = value(call, r, i)
			}
			return collective.AllReduce(ctx, c, in, out, collective.Sum)
		})
		for r := range n {
			if errs[r] != nil {
				t.Fatalf("call %d (%d elements), rank %d: %v", call, count, r, errs[r])
			}
			for i, v := range outs[r] {
				var want int64
				for q := range n {
					want += value(call, q, i)
				}
				if v != want {
					t.Fatalf("call %d (%d elements), rank %d: [%d] = %#x, want %#x", call, count, r, i, v, want)
				}
			}
		}
	}
	for call := range calls {
		allreduce(call, count)
	}
	for r, c := range comms {
		if got := c.BoardCalls(); got != calls-1 {
			t.Fatalf("rank %d: %d AllReduces of %d bytes on the board, want %d (all but the set-up call)", r, got, 8*count, calls-1)
		}
	}
	allreduce(calls, count+1)
	for r, c := range comms {
		if got := c.BoardCalls(); got != calls-1 {
			t.Fatalf("rank %d: an AllReduce of %d bytes ran on the board (%d calls there, want %d)", r, 8*(count+1), got, calls-1)
		}
	}
}
