//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardEagerRootLearnsSlowReceiverFailure: the eager root runs up to
// the board's slots ahead of a slow receiver whose first call's count
// differs; the receiver fails that call after the root returned from it
// and from later ones. The root must learn it at a later call (at the
// latest the one reusing the slot) or at Close: its call that reuses the
// slot must not drop the pending call unchecked.
func TestBoardEagerRootLearnsSlowReceiverFailure(t *testing.T) {
	for _, n := range []int{2, 3} {
		comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: time.Minute})
		for range 4 { // the set-up call, then steady state
			broadcastAll(comms, same(n, 2), 0, 20*time.Second)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		const calls = 8
		errs := make([][]error, n)
		done := make(chan bool, n)
		for r := range n {
			go func() {
				if r == n-1 {
					time.Sleep(50 * time.Millisecond) // slow; its first call's count differs
				}
				for i := range calls {
					k := 2
					if r == n-1 && i == 0 {
						k = 3
					}
					got := make([]int64, k)
					errs[r] = append(errs[r], collective.Broadcast(ctx, comms[r], got, got, 0))
				}
				done <- true
			}()
		}
		for range n {
			<-done
		}
		if errs[n-1][0] == nil {
			t.Fatalf("n=%d: the mismatched rank did not fail its call", n)
		}
		for r := range n - 1 {
			failed := comms[r].Close() != nil
			for _, err := range errs[r] {
				failed = failed || err != nil
			}
			t.Logf("n=%d rank %d: %v", n, r, errs[r])
			if !failed {
				t.Errorf("n=%d: rank %d returned nil from all %d calls and from Close: rank %d's failure of call 0 never reached it", n, r, calls, n-1)
			}
		}
	}
}
