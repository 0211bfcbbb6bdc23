//go:build linux

package shm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardRootFailsAfterReceiverClosed (review A15, M1): 2 ranks, eager
// ring Broadcasts from root 0; rank 1 closes its communicator (its
// endpoint stays open) and calls nothing more. The root's next Broadcast
// fails, naming rank 1's Close, rather than returning nil for ever (its
// data going nowhere, the ring's run-ahead bound void).
func TestBoardRootFailsAfterReceiverClosed(t *testing.T) {
	comms := boardComms(t, 2, shm.Config{}, collective.Config{Timeout: 5 * time.Second, BoardRing: 8, StallTimeout: time.Second})
	for range 9 { // calls 0 (the set-up, point to point) to 8: every ring slot written
		_, errs := broadcastAll(comms, same(2, 2), 0, 10*time.Second)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("warm-up rank %d: %v", r, err)
			}
		}
	}
	if comms[0].EagerReturns() == 0 {
		t.Fatal("no eager call in the warm-up")
	}
	if err := comms[1].Close(); err != nil {
		t.Fatalf("rank 1 Close: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	nils := 0
	var err error
	for i := range 300 {
		buf := []int64{int64(i), 1}
		if err = collective.Broadcast(ctx, comms[0], buf, buf, 0); err != nil {
			break
		}
		nils++
	}
	t.Logf("root: %d calls returned nil after rank 1 closed, then: %v", nils, err)
	if err == nil || !strings.Contains(err.Error(), "rank 1 closed this communicator after operation #8") {
		t.Errorf("the root's Broadcasts on a communicator its only receiver closed after its call 8: %d nil, then %v", nils, err)
	}
	if nils != 0 {
		t.Errorf("%d calls returned nil after the receiver's Close (every slot was written before it)", nils)
	}
}

// TestBoardOthersFailAfterFirstReceiverClosed (review A15, M1): 4 ranks,
// eager ring Broadcasts from root 0; rank 1 (whom no rank checks: its
// predecessor is the root) closes its communicator; ranks 0, 2 and 3 each
// fail their first Broadcast after it, naming rank 1's Close.
func TestBoardOthersFailAfterFirstReceiverClosed(t *testing.T) {
	const n = 4
	comms := boardComms(t, n, shm.Config{}, collective.Config{Timeout: 3 * time.Second, BoardRing: 8, StallTimeout: time.Second})
	for range 9 { // calls 0 (the set-up, point to point) to 8: every ring slot written
		_, errs := broadcastAll(comms, same(n, 2), 0, 10*time.Second)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("warm-up rank %d: %v", r, err)
			}
		}
	}
	if err := comms[1].Close(); err != nil {
		t.Fatalf("rank 1 Close: %v", err)
	}
	var wg sync.WaitGroup
	nils := make([]int, n)
	errs := make([]error, n)
	for _, r := range []int{0, 2, 3} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for i := range 300 {
				buf := []int64{int64(i), 1}
				if errs[r] = collective.Broadcast(ctx, comms[r], buf, buf, 0); errs[r] != nil {
					return
				}
				nils[r]++
			}
		}()
	}
	wg.Wait()
	t.Logf("calls that returned nil after rank 1 closed: %v", nils)
	for _, r := range []int{0, 2, 3} {
		if errs[r] == nil || !strings.Contains(errs[r].Error(), "rank 1 closed this communicator after operation #8") || nils[r] != 0 {
			t.Errorf("rank %d: %d calls nil after rank 1's Close, then %v", r, nils[r], errs[r])
		}
	}
}

// TestBoardCheckerFailsAfterCheckedReceiverClosed (review A15, M1): 3
// ranks, eager ring Broadcasts from root 0 (rank 1 checks rank 2's
// headers); rank 2 closes its communicator. Rank 1's wait for rank 2's
// header of a later call ends at once, naming rank 2's Close (before: at
// its deadline, "rank 2 never wrote this call"), and rank 0 fails too.
func TestBoardCheckerFailsAfterCheckedReceiverClosed(t *testing.T) {
	comms := boardComms(t, 3, shm.Config{}, collective.Config{Timeout: 10 * time.Second, BoardRing: 8, StallTimeout: time.Second})
	for range 9 {
		_, errs := broadcastAll(comms, same(3, 2), 0, 10*time.Second)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("warm-up rank %d: %v", r, err)
			}
		}
	}
	if err := comms[2].Close(); err != nil {
		t.Fatalf("rank 2 Close: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range 100 {
				buf := []int64{int64(i), 1}
				if errs[r] = collective.Broadcast(ctx, comms[r], buf, buf, 0); errs[r] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		t.Logf("rank %d: %v", r, err)
		if err == nil || !strings.Contains(err.Error(), "rank 2 closed this communicator after operation #8") {
			t.Errorf("rank %d: %v, want a failure naming rank 2's Close", r, err)
		}
	}
}

// leanOnce runs one 1-element Broadcast of v from root 0 on each rank in
// turn (the root first, so every receiver finds its slot: each may go
// lean).
func leanOnce(t *testing.T, comms []*collective.Comm, v int64) {
	t.Helper()
	for r, c := range comms {
		buf := []int64{0}
		if r == 0 {
			buf[0] = v
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := collective.Broadcast(ctx, c, buf, buf, 0)
		cancel()
		if err != nil || buf[0] != v {
			t.Fatalf("rank %d: %d, %v", r, buf[0], err)
		}
	}
}

// TestBoardRootFailsAfterReceiverBoardReclaimed (review A16, M1): rank 1
// closes communicator W (its board is given back at once: rank 0 had read
// all it wrote), then both ranks make communicator X on the same
// endpoints, whose board on rank 1 takes the index W's had, and run 300
// calls on it, storing acks far past W's numbers there. Rank 0's
// Broadcasts as W's root must then fail, naming rank 1's Close, within
// BoardRing calls: X's acks on that board are not rank 1's acks of W.
// Lean (the steady call's own check) and generic (OnOpEnd set turns the
// lean path off: boardPublish's).
func TestBoardRootFailsAfterReceiverBoardReclaimed(t *testing.T) {
	t.Run("lean", func(t *testing.T) { rootAfterBoardReclaimed(t, false) })
	t.Run("generic", func(t *testing.T) { rootAfterBoardReclaimed(t, true) })
}

func rootAfterBoardReclaimed(t *testing.T, generic bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, 2, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := collective.Config{Timeout: 10 * time.Second, BoardRing: 16}
	w := make([]*collective.Comm, 2)
	for i, ep := range eps {
		if w[i], err = collective.New(transport.Endpoint(ep), 7, cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ep.Close() })
	}
	for range 4 {
		if _, errs := broadcastAll(w, same(2, 1), 0, 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	leanOnce(t, w, 5)
	leanOnce(t, w, 6)
	if err := w[1].Close(); err != nil {
		t.Fatalf("rank 1's Close of W: %v", err)
	}
	x := make([]*collective.Comm, 2)
	for i, ep := range eps {
		if x[i], err = collective.New(transport.Endpoint(ep), 9, cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = x[i].Close() })
	}
	for range 300 {
		if _, errs := allReduceAll(x, same(2, 1), 20*time.Second); errors.Join(errs...) != nil {
			t.Fatal(errs)
		}
	}
	t.Logf("X's board calls on rank 1: %d", x[1].BoardCalls())
	if generic {
		w[0].OnOpEnd(func(collective.OpRecord) {})
	}
	nils, lean0 := 0, w[0].BoardLeanCalls()
	var first error
	for i := range 200 {
		c, cancel := context.WithTimeout(context.Background(), 12*time.Second)
		err := collective.Broadcast(c, w[0], []int64{int64(i)}, []int64{int64(i)}, 0)
		cancel()
		if err != nil {
			first = err
			break
		}
		nils++
	}
	t.Logf("rank 0 as W's root after rank 1 closed W: %d calls returned nil (%d lean); then: %v", nils, w[0].BoardLeanCalls()-lean0, first)
	_ = w[0].Close()
	if nils > cfg.BoardRing {
		t.Fatalf("rank 0 ran %d Broadcasts on W after its only receiver closed W, all nil: more than BoardRing (%d) ahead of it", nils, cfg.BoardRing)
	}
	if first == nil || !strings.Contains(first.Error(), "rank 1 closed this communicator") {
		t.Fatalf("rank 0's Broadcast on W after rank 1 closed it: %v, want rank 1's Close named", first)
	}
}
