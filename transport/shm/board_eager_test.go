//go:build linux

package shm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardEagerRootLearnsSlowReceiverFailure: the eager root runs up to
// the board's slots ahead of a slow receiver whose first call's count
// differs: 4 calls (the big slots) for a Broadcast above 64 bytes,
// Config.BoardRing for a smaller one (the ring). The receiver fails that
// call after the root returned from it and from later ones. The root must
// learn it at a later call, at the latest the one reusing the slot (its
// call that reuses the slot must not drop the pending call unchecked),
// and so must every other receiver (at 4 ranks, rank 1 checks neither the
// root's header nor rank 3's: it hears of it through the root's failure
// of that call).
func TestBoardEagerRootLearnsSlowReceiverFailure(t *testing.T) {
	for _, tc := range []struct {
		words, ahead int // the Broadcast's int64s (the slow receiver's first call has one more); the slots
		ring         int // Config.BoardRing
	}{{2, collective.DefaultBoardRing, 0}, {2, 16, 16}, {16, 4, 0}} {
		for _, n := range []int{2, 3, 4} {
			comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: tc.ring})
			for range 4 { // the set-up call, then steady state
				broadcastAll(comms, same(n, tc.words), 0, 20*time.Second)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			calls := tc.ahead + 4
			errs := make([][]error, n)
			done := make(chan bool, n)
			for r := range n {
				go func() {
					if r == n-1 {
						time.Sleep(50 * time.Millisecond) // slow; its first call's count differs
					}
					for i := range calls {
						k := tc.words
						if r == n-1 && i == 0 {
							k++
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
				t.Fatalf("%d int64s, n=%d: the mismatched rank did not fail its call", tc.words, n)
			}
			for r := range n - 1 {
				failed := false
				for _, err := range errs[r][:tc.ahead+1] { // call 0 and those after it up to the slot's reuse
					failed = failed || err != nil
				}
				if !failed {
					t.Errorf("%d int64s, n=%d: rank %d returned nil from calls 0 to %d (%d reuses call 0's slot): rank %d's failure of call 0 never reached it",
						tc.words, n, r, tc.ahead, tc.ahead, n-1)
				}
			}
		}
	}
}

// TestBoardSetUpFailedOnOneRank: the set-up call (the first board-sized
// one) fails on one rank only, before its AllGather (its context is
// cancelled), while the other finishes the set-up. The ranks then
// disagree on the board: the next call must fail at once on both (the
// set-up rank's header says so), not at its deadline, and the
// communicator must set up again and run its small calls on the board.
func TestBoardSetUpFailedOnOneRank(t *testing.T) {
	comms := boardComms(t, 2, shm.Config{}, collective.Config{Timeout: time.Minute})
	errs := make([]error, 2)
	done := make(chan bool, 2)
	for r, c := range comms {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			if r == 1 {
				cancel() // this rank's set-up call is cancelled
			}
			defer cancel()
			out := make([]int64, 2)
			errs[r] = collective.AllReduce(ctx, c, []int64{1, 2}, out, collective.Sum)
			done <- true
		}()
	}
	<-done
	<-done
	t.Logf("set-up call: %v", errs)
	var last []error
	for i := range 4 {
		sums, errs := allReduceAll(comms, same(2, 2), 20*time.Second)
		t.Logf("call %d: %v; board calls %d %d", i, errs, comms[0].BoardCalls(), comms[1].BoardCalls())
		for r, err := range errs {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call %d, rank %d ran to its deadline: %v", i, r, err)
			}
			if err == nil && !slices.Equal(sums[r], sums[0]) {
				t.Fatalf("call %d: rank %d got %v, rank 0 %v", i, r, sums[r], sums[0])
			}
		}
		last = errs
	}
	if last[0] != nil || last[1] != nil || comms[0].BoardCalls() == 0 || comms[1].BoardCalls() == 0 {
		t.Fatalf("the communicator never set the board up again together: %v, board calls %d %d", last, comms[0].BoardCalls(), comms[1].BoardCalls())
	}
}

// TestBoardSkippedBroadcastReported: rank 2 skips an eager board
// Broadcast that ranks 0 (root) and 1 make. Rank 1 was to check rank 2's
// header of it; its Close waits for it (bounded by Config.Timeout here)
// and must then report the unchecked call, naming rank 2.
func TestBoardSkippedBroadcastReported(t *testing.T) {
	comms := boardComms(t, 3, shm.Config{}, collective.Config{Timeout: time.Second})
	for range 4 {
		broadcastAll(comms, same(3, 2), 0, 20*time.Second)
	}
	ctx := context.Background()
	var errs []error
	for r := range 2 {
		got := make([]int64, 2)
		errs = append(errs, collective.Broadcast(ctx, comms[r], got, got, 0))
	}
	for r := range 3 {
		errs = append(errs, comms[r].Close())
	}
	t.Logf("calls and Closes: %v", errs)
	if errs[3] == nil || !strings.Contains(errs[3].Error(), "rank 2 never wrote it") {
		t.Fatalf("rank 2 skipped a Broadcast that ranks 0 and 1 completed: rank 1's Close says %v", errs[3])
	}
}
