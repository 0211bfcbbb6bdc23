//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardTwoCallsInFlight runs two async board AllReduces at once on
// every rank, one rank late so that the others' first call still waits on
// its slot while their second waits for its turn: the second must not
// disturb the first's wait (a deadlock, or "a broken board" from a wait
// the call never made), and each gets its own sum.
func TestBoardTwoCallsInFlight(t *testing.T) {
	n := 3
	comms := boardComms(t, n, shm.Config{}, collective.Config{})
	allReduceAll(comms, same(n, 4), 20*time.Second) // set-up call
	for iter := 0; iter < 50; iter++ {
		errs := make(chan error, 2*n)
		for r, c := range comms {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if r == n-1 {
					time.Sleep(3 * time.Millisecond) // the others' first call waits on this rank's slot
				}
				a, b := []int64{int64(r), 1}, []int64{int64(r), 2}
				ra, rb := make([]int64, 2), make([]int64, 2)
				ha := collective.AllReduceAsync(ctx, c, a, ra, collective.Sum)
				hb := collective.AllReduceAsync(ctx, c, b, rb, collective.Sum)
				ea, eb := ha.Wait(ctx), hb.Wait(ctx)
				if ea == nil && (ra[0] != 3 || ra[1] != 3) {
					t.Errorf("rank %d call a: %v", r, ra)
				}
				if eb == nil && (rb[0] != 3 || rb[1] != 6) {
					t.Errorf("rank %d call b: %v", r, rb)
				}
				errs <- ea
				errs <- eb
			}()
		}
		for range 2 * n {
			if err := <-errs; err != nil {
				t.Fatalf("iter %d: %v", iter, err)
			}
		}
	}
	if got := comms[0].BoardCalls(); got < 100 {
		t.Fatalf("%d calls ran on the board, want the 100 async ones", got)
	}
}

// TestBoardCloseWithCallRunning: a communicator is closed while a board
// call of rank 0 still runs (rank 1 never joins it; it ends at its
// deadline). With one board per endpoint, the board must come back once
// that call ends, so a new communicator on the same endpoints gets it.
func TestBoardCloseWithCallRunning(t *testing.T) {
	const n = 2
	mk := boardWorld(t, n, shm.Config{Boards: 1})
	a := mk(7)
	allReduceAll(a, same(n, 2), 10*time.Second) // set-up: each rank's one board
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	h := collective.AllReduceAsync(ctx, a[0], []int64{1}, make([]int64, 1), collective.Sum) // rank 1 never calls
	time.Sleep(20 * time.Millisecond)
	for _, c := range a {
		_ = c.Close()
	}
	if err := h.Wait(context.Background()); err == nil {
		t.Fatalf("a call rank 1 never made returned nil")
	}
	b := mk(8)
	for range 3 {
		if _, errs := allReduceAll(b, same(n, 2), 10*time.Second); errs[0] != nil || errs[1] != nil {
			t.Fatalf("communicator b: %v", errs)
		}
	}
	if b[0].BoardCalls() == 0 {
		t.Fatalf("communicator b has no board: rank 0's board stayed with the closed communicator a")
	}
}

// TestBoardReaderChecksTheBoardsCommunicator: rank 0 waits in an async
// board AllReduce of communicator a that rank 1 never makes; rank 1
// closes a, and its board goes to communicator b, whose calls reach the
// same sequence number with the same arguments. Rank 0's call of a must
// not take b's slot as rank 1's part of a's call: it fails (rank 1's board
// is no longer a's), not silently sums the wrong data.
func TestBoardReaderChecksTheBoardsCommunicator(t *testing.T) {
	const n = 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mk := boardWorld(t, n, shm.Config{Boards: 2})
	a, b := mk(7), mk(8)
	for range 3 { // a's set-up call and two more: the next is a's call #3
		if _, errs := allReduceAll(a, same(n, 2), 10*time.Second); errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
	}
	got := make([]int64, 2)
	h := collective.AllReduceAsync(ctx, a[0], []int64{1, 1}, got, collective.Sum) // rank 1 never calls it
	if err := a[1].Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 { // b's calls #0 to #3 (its set-up call takes rank 1's board back)
		if _, errs := allReduceAll(b, same(n, 2), 10*time.Second); errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
	}
	err := h.Wait(ctx)
	t.Logf("a's call #3 on rank 0: %v, %v", err, got)
	if err == nil {
		t.Fatalf("rank 0's call of a returned %v from rank 1's board after rank 1 closed a and b took that board", got)
	}
	_ = a[0].Close()
}

// boardWorld makes n shm endpoints in this process (closed at the test's
// end) and returns a maker of communicators over all of them.
func boardWorld(t *testing.T, n int, scfg shm.Config) func(id uint64) []*collective.Comm {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, n, scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := range n {
			_ = eps[i].Close()
		}
	})
	return func(id uint64) []*collective.Comm {
		cs := make([]*collective.Comm, n)
		for i, ep := range eps {
			c, err := collective.New(transport.Endpoint(ep), id, collective.Config{})
			if err != nil {
				t.Fatal(err)
			}
			cs[i] = c
		}
		return cs
	}
}
