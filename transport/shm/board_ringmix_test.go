//go:build linux

package shm_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// ringBigMismatch runs eager Broadcasts of 8 int64s (64 bytes: a ring
// slot) from rank 0 of n, where receiver badRank calls with count 9 (72
// bytes: a big slot) at its calls i that bad says, once the root has run
// the ring's depth ahead if arranged. Its slot acks then never match the
// others' (each rank acks only the kind of slot its call took): every
// call must still end promptly, none waiting to the deadline, badRank
// must fail each bad call, and the root must get the mismatch within the
// ring's depth of calls (review A14 H1).
func ringBigMismatch(t *testing.T, n, badRank int, arranged bool, bad func(i int) bool) {
	const ring, calls = 16, 40
	comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: 5 * time.Second, BoardRing: ring})
	for range 4 {
		_, errs := broadcastAll(comms, same(n, 8), 0, 20*time.Second)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("warm-up rank %d: %v", r, err)
			}
		}
	}
	var rootDone atomic.Int64
	type res struct {
		err error
		d   time.Duration
	}
	out := make([][]res, n)
	done := make(chan bool, n)
	for r := range n {
		go func() {
			defer func() { done <- true }()
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			if r == badRank && arranged { // the root runs the ring's depth ahead first
				for end := time.Now().Add(10 * time.Second); rootDone.Load() < ring && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
			}
			for i := range calls {
				k := 8
				if r == badRank && bad(i) {
					k = 9
				}
				buf := make([]int64, k)
				start := time.Now()
				err := collective.Broadcast(ctx, comms[r], buf, buf, 0)
				out[r] = append(out[r], res{err, time.Since(start)})
				if r == 0 {
					rootDone.Add(1)
				}
			}
		}()
	}
	for range n {
		<-done
	}
	for r := range n {
		for i, x := range out[r] {
			if x.err != nil || x.d > time.Second {
				t.Logf("rank %d call %d after %v: %v", r, i, x.d.Round(time.Millisecond), x.err)
			}
			if x.d > 2*time.Second {
				t.Errorf("rank %d call %d took %v (%v): a wait to the deadline, not the mismatch", r, i, x.d.Round(time.Millisecond), x.err)
			}
		}
	}
	failed := false
	for _, x := range out[0][:min(len(out[0]), 4+ring+1)] {
		failed = failed || x.err != nil
	}
	if !failed {
		t.Errorf("the root returned nil from calls 0 to %d: rank %d's failures never reached it", 4+ring, badRank)
	}
	for i, x := range out[badRank] {
		if bad(i) && x.err == nil {
			t.Errorf("rank %d's call %d (count 9 against 8) returned nil", badRank, i)
		}
	}
}

// TestBoardRingBigMismatchEndsPromptly: the receiver calls with a count
// that puts the call in a big slot at its calls 0 and 4, once the root is
// the ring's depth ahead: the root's reuse of call 0's ring slot and the
// receiver's reuse of its big slot at call 4 must not wait on each other's
// ack of a slot the other never took.
func TestBoardRingBigMismatchEndsPromptly(t *testing.T) {
	ringBigMismatch(t, 2, 1, true, func(i int) bool { return i == 0 || i == 4 })
}

// TestBoardRingBigMismatchUnarrangedEndsPromptly: the receiver calls with
// the big-slot count from its call 2 on, no timing arranged; the root
// also fails calls before they reach the board (rootFailed), which ack no
// slot at all: no call may wait for such an ack.
func TestBoardRingBigMismatchUnarrangedEndsPromptly(t *testing.T) {
	ringBigMismatch(t, 2, 1, false, func(i int) bool { return i >= 2 })
}

// TestBoardRingBigMismatchThreeRanks: at 3 ranks eager receivers leave
// their next receiver's header to check (rank 1 checks rank 2's), which
// holds back what they tell the others they are done with: a receiver,
// either one, that takes a big slot at every 7th call must still not
// leave any rank waiting to the deadline.
func TestBoardRingBigMismatchThreeRanks(t *testing.T) {
	for bad := 1; bad <= 2; bad++ {
		ringBigMismatch(t, 3, bad, false, func(i int) bool { return i%7 == 2 })
	}
}

// TestBoardRingVerifierPauses: rank 1 of 3 checks rank 2's header of each
// eager call only at its own next call (boardVerify), and pauses between
// its calls while the root and rank 2 run the ring's depth ahead: what
// rank 1 tells the others it is done with (its ended word) must not
// cover a call whose check is still left, or rank 2 rewrites the slot
// under the check ("a broken board"). Every call right on every rank.
func TestBoardRingVerifierPauses(t *testing.T) {
	const n, ring, calls = 3, 8, 4 * 8
	comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: 20 * time.Second, BoardRing: ring})
	for range 4 {
		broadcastAll(comms, same(n, 3), 0, 20*time.Second)
	}
	errs := make(chan error, n)
	for r := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range calls {
				if r == 1 {
					time.Sleep(2 * time.Millisecond)
				}
				buf := make([]int64, 3)
				if r == 0 {
					copy(buf, ringData(i, 3))
				}
				if err := collective.Broadcast(ctx, comms[r], buf, buf, 0); err != nil || !slices.Equal(buf, ringData(i, 3)) {
					errs <- fmt.Errorf("rank %d call %d: %v %v", r, i, buf, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
