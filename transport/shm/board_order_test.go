//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
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
