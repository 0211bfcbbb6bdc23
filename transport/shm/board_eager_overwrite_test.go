//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardEagerRootLearnsOverwrittenFailure: the receiver fails the
// eager root's call 0 (its count differs) and then, before the root's
// call that reuses call 0's slot, a later call the root has not begun
// (its context is cancelled), so its board's fail word names that later
// call by the time the root settles call 0. The root's call reusing the
// slot must still fail, naming call 0: the CI flake of session 25
// (TestBoardEagerRootLearnsSlowReceiverFailure, 2 int64s, BoardRing 16,
// n=4), where the slow receiver's failure of call 0 was overwritten by
// its failure of call 16, relayed from the receiver that checks it, and
// the root returned nil from call 16. Every step runs in this goroutine,
// in this order: an eager root call and a receiver's call whose root's
// slot is written wait for nobody.
func TestBoardEagerRootLearnsOverwrittenFailure(t *testing.T) {
	for _, tc := range []struct{ words, ahead, ring int }{{16, 4, 0}, {2, 16, 16}} {
		comms := boardComms(t, 2, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: tc.ring})
		const warm = 4 // the set-up call, then steady state: operations #0 to #3
		for range warm {
			broadcastAll(comms, same(2, tc.words), 0, 20*time.Second)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		bcast := func(ctx context.Context, r, k int) error {
			got := make([]int64, k)
			return collective.Broadcast(ctx, comms[r], got, got, 0)
		}
		for i := range tc.ahead { // the root's calls 0 to ahead-1: eager, on the board
			if err := bcast(ctx, 0, tc.words); err != nil {
				t.Fatalf("%d int64s: root's call %d: %v", tc.words, i, err)
			}
		}
		if err := bcast(ctx, 1, tc.words+1); err == nil {
			t.Fatalf("%d int64s: the receiver's mismatched call 0 did not fail", tc.words)
		}
		for i := 1; i < tc.ahead; i++ {
			if err := bcast(ctx, 1, tc.words); err != nil { // after a failure: checked in full
				t.Fatalf("%d int64s: the receiver's call %d: %v", tc.words, i, err)
			}
		}
		dead, stop := context.WithCancel(ctx)
		stop()
		if err := bcast(dead, 1, tc.words); err == nil {
			t.Fatalf("%d int64s: the receiver's cancelled call %d did not fail", tc.words, tc.ahead)
		}
		err := bcast(ctx, 0, tc.words) // reuses call 0's slot
		t.Logf("%d int64s: root's call %d: %v", tc.words, tc.ahead, err)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("operation #%d,", warm)) {
			t.Errorf("%d int64s: the root's call %d (it reuses call 0's slot) returned %v: the receiver's failure of call 0 (operation #%d) never reached it",
				tc.words, tc.ahead, err, warm)
		}
	}
}
