package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardBroadcastDefaultLimit: with shm's and collective's defaults a
// Broadcast of 256 KiB (DefaultBoardBroadcastBytes) at 4 ranks runs on
// the board after the set-up call (shm's default board's slots hold it),
// from each root in turn and with new data every call, so that every
// big slot is rewritten with other bytes, every rank's values right; one
// element more takes the point-to-point path, its values right too.
func TestBoardBroadcastDefaultLimit(t *testing.T) {
	const n, calls = 4, 9
	count := 256 << 10 / 8
	comms := boardComms(t, n, shm.Config{}, collective.Config{})
	bcast := func(call, count int) {
		t.Helper()
		root := call % n
		value := func(i int) int64 { return int64(call)<<40 | int64(root)<<32 | int64(i) }
		outs, errs := onEveryRank(comms, same(n, count), 20*time.Second, func(ctx context.Context, r int, c *collective.Comm, out []int64) error {
			if r == root {
				for i := range out {
					out[i] = value(i)
				}
			}
			return collective.Broadcast(ctx, c, out, out, root)
		})
		for r := range n {
			if errs[r] != nil {
				t.Fatalf("call %d (%d elements, root %d), rank %d: %v", call, count, root, r, errs[r])
			}
			for i, v := range outs[r] {
				if v != value(i) {
					t.Fatalf("call %d (%d elements, root %d), rank %d: [%d] = %#x, want %#x", call, count, root, r, i, v, value(i))
				}
			}
		}
	}
	for call := range calls {
		bcast(call, count)
	}
	for r, c := range comms {
		if got := c.BoardCalls(); got != calls-1 {
			t.Fatalf("rank %d: %d Broadcasts of %d bytes on the board, want %d (all but the set-up call)", r, got, 8*count, calls-1)
		}
	}
	bcast(calls, count+1)
	for r, c := range comms {
		if got := c.BoardCalls(); got != calls-1 {
			t.Fatalf("rank %d: a Broadcast of %d bytes ran on the board (%d calls there, want %d)", r, 8*(count+1), got, calls-1)
		}
	}
}
