//go:build linux

package shm_test

import (
	"context"
	"errors"
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

// TestBoardEagerCheckSeesOverwrittenFailure: at 3 ranks, rank 1 checks
// rank 2's header of each eager Broadcast. Rank 2 fails call 0 without
// writing it on the board (its count is too large for the board: it
// runs point-to-point and finds the root's call on the board, a
// mismatch), takes calls 1 to 3, and fails call 4 (its context is
// cancelled) after writing it in call 0's slot, before the root wrote
// it: its fail word names call 4, its slot 0 holds call 4. Rank 1's call
// 4 reuses the slot, so it takes the check of call 0 first: it must
// fail with rank 2's failure of call 0 (its fail-before word), not call
// the board broken nor wait to its deadline.
func TestBoardEagerCheckSeesOverwrittenFailure(t *testing.T) {
	const words, ahead = 16, 4 // the big slots
	comms := boardComms(t, 3, shm.Config{}, collective.Config{Timeout: time.Minute})
	for range 4 {
		broadcastAll(comms, same(3, words), 0, 20*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bcast := func(ctx context.Context, r, k int) error {
		got := make([]int64, k)
		return collective.Broadcast(ctx, comms[r], got, got, 0)
	}
	for i := range ahead { // the root's calls 0 to 3 and rank 1's, in turn (rank 1 acks a slot as it takes its check): eager
		for r := range 2 {
			if err := bcast(ctx, r, words); err != nil {
				t.Fatalf("rank %d's call %d: %v", r, i, err)
			}
		}
	}
	err := bcast(ctx, 2, 1<<16) // too large for the board
	t.Logf("rank 2's call 0: %v", err)
	if err == nil {
		t.Fatalf("rank 2's mismatched call 0 did not fail")
	}
	for i := 1; i < ahead; i++ {
		if err := bcast(ctx, 2, words); err != nil {
			t.Fatalf("rank 2's call %d: %v", i, err)
		}
	}
	dead, stop := context.WithCancel(ctx)
	stop()
	if err := bcast(dead, 2, words); err == nil {
		t.Fatalf("rank 2's cancelled call %d did not fail", ahead)
	}
	err = bcast(ctx, 1, words)
	t.Logf("rank 1's call %d: %v", ahead, err)
	if err == nil || strings.Contains(err.Error(), "broken board") || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), fmt.Sprintf("operation #%d,", 4)) {
		t.Errorf("rank 1's call %d, which takes its check of rank 2's call 0 (operation #4): %v", ahead, err)
	}
}
