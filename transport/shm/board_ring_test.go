//go:build linux

package shm_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// ringLoop runs calls Broadcasts of words int64s from root 0 on every
// rank at once, the root's data of call i being ringData(i, words); the
// last rank starts only once the root has returned from ring calls (or
// after 10 s), checks that the root is still there 20 ms later (it waits
// for that rank to be done with its first call before reusing the slot),
// and takes bad as its count at call badAt (-1: never). It returns every
// rank's data and error per call.
func ringLoop(t *testing.T, comms []*collective.Comm, ring, calls, words, badAt int) ([][][]int64, [][]error) {
	t.Helper()
	n := len(comms)
	var rootDone atomic.Int64
	outs, errs := make([][][]int64, n), make([][]error, n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan bool, n)
	for r := range n {
		go func() {
			defer func() { done <- true }()
			if r == n-1 {
				for end := time.Now().Add(10 * time.Second); rootDone.Load() < int64(ring) && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				if got := rootDone.Load(); got != int64(ring) {
					t.Errorf("the root returned from %d calls before the slow rank's first: want the ring's %d", got, ring)
				}
			}
			for i := range calls {
				k := words
				if r == n-1 && i == badAt {
					k++
				}
				buf := make([]int64, k)
				if r == 0 {
					copy(buf, ringData(i, k))
				}
				errs[r] = append(errs[r], collective.Broadcast(ctx, comms[r], buf, buf, 0))
				outs[r] = append(outs[r], buf)
				if r == 0 {
					rootDone.Add(1)
				}
			}
		}()
	}
	for range n {
		<-done
	}
	return outs, errs
}

// ringData is the root's data of call i.
func ringData(i, words int) []int64 {
	d := make([]int64, words)
	for j := range d {
		d[j] = int64(i*1000 + j)
	}
	return d
}

// TestBoardRingSlowReceiver: an eager root Broadcast of a few bytes runs
// exactly Config.BoardRing calls ahead of a slow receiver (the ring's
// depth, beyond the 4 big slots), then waits for it; every receiver gets
// every call's own data, though each ring slot is reused several times
// while the slow one catches up.
func TestBoardRingSlowReceiver(t *testing.T) {
	const ring = 16
	for _, n := range []int{2, 4} {
		comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: ring})
		for range 4 { // the set-up call, then steady state
			broadcastAll(comms, same(n, 3), 0, 20*time.Second)
		}
		const calls = 5 * ring
		outs, errs := ringLoop(t, comms, ring, calls, 3, -1)
		for r := range n {
			for i := range calls {
				if errs[r][i] != nil {
					t.Fatalf("n=%d rank %d call %d: %v", n, r, i, errs[r][i])
				}
				if want := ringData(i, 3); !slices.Equal(outs[r][i], want) {
					t.Fatalf("n=%d rank %d call %d: got %v, want %v", n, r, i, outs[r][i], want)
				}
			}
		}
		if comms[0].EagerReturns() < calls {
			t.Errorf("n=%d: the root returned early from %d calls of %d", n, comms[0].EagerReturns(), calls)
		}
	}
}

// TestBoardRingMismatchDeep: the slow receiver's count differs at a call
// deep in the root's run-ahead (call 5 of a 16-deep ring, after the root
// returned from 16): every rank fails a call from that one up to the one
// that reuses its slot (16 later) at the latest, as the package doc says.
func TestBoardRingMismatchDeep(t *testing.T) {
	const ring, badAt = 16, 5
	for _, n := range []int{2, 3, 4} {
		comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: time.Minute, BoardRing: ring})
		for range 4 {
			broadcastAll(comms, same(n, 3), 0, 20*time.Second)
		}
		_, errs := ringLoop(t, comms, ring, badAt+ring+4, 3, badAt)
		if errs[n-1][badAt] == nil {
			t.Fatalf("n=%d: the mismatched rank returned nil from its call", n)
		}
		for r := range n {
			for i, err := range errs[r][:badAt] {
				if err != nil {
					t.Fatalf("n=%d rank %d call %d, before the mismatch: %v", n, r, i, err)
				}
			}
			failed := false
			for _, err := range errs[r][badAt : badAt+ring+1] {
				failed = failed || err != nil
			}
			if !failed {
				t.Errorf("n=%d rank %d: nil from calls %d to %d: the failure of call %d never reached it: %v", n, r, badAt, badAt+ring, badAt, errs[r])
			}
		}
	}
}

// TestBoardRingDiffers: ranks whose Config.BoardRing differ would place
// the board's slots differently: every rank finds it at the set-up and
// the communicator does without the board, every call (the set-up one
// too) going point to point with the right result.
func TestBoardRingDiffers(t *testing.T) {
	const n = 3
	comms := boardCommsEach(t, n, shm.Config{}, func(r int) collective.Config {
		return collective.Config{Timeout: time.Minute, BoardRing: 8 * (1 + r/2)}
	})
	for i := range 4 {
		sums, errs := allReduceAll(comms, same(n, 2), 20*time.Second)
		for r, err := range errs {
			if err != nil || sums[r][0] != 1+2+3 {
				t.Fatalf("call %d rank %d: %v, %v", i, r, sums[r], err)
			}
		}
		outs, errs := broadcastAll(comms, same(n, 2), 1, 20*time.Second)
		for r, err := range errs {
			if err != nil || outs[r][1] != 101 {
				t.Fatalf("Broadcast %d rank %d: %v, %v", i, r, outs[r], err)
			}
		}
	}
	for r, c := range comms {
		if c.BoardCalls() != 0 {
			t.Errorf("rank %d ran %d calls on the board", r, c.BoardCalls())
		}
	}
}
