package collectivetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// eagerAfter is collective's count of matched calls in a row before a
// root returns early (collective/eager.go); the test checks it exactly.
const eagerAfter = 3

// RunEager checks the steady-state fast path of rooted operations over
// the transport nw builds, at 4 ranks: in a loop of one Broadcast (8
// bytes, and 8 KiB, which the root copies out and rank 2, in the
// dissemination, forwards from its own buffer, waiting for that send),
// Scatter or direct Gather
// (whose senders are eager), the root, and every rank of the Broadcast,
// returns before its confirmation from the (eagerAfter+1)th call on,
// counted by Comm.EagerReturns, and from the first call of a loop after a
// Barrier that followed such calls, and reuses its buffer at once while every
// rank still gets each call's data; a mismatch in such a call (one rank's
// count, or the roots split) is an error in that call on the rank that
// sees it, the ranks that return nil from it returned early, and the next
// call of each of them fails (the root's naming the earlier call's
// mismatch), that next call failing on every rank, also when a Barrier
// came just before the mismatched call; the path is then
// confirmed again for eagerAfter calls; a rank that returned nil and makes
// no further call gets the error from Close.
func RunEager(t *testing.T, nw NewWorld) {
	const n, loops = 4, 8
	for _, bytes := range []int{8, 8 << 10} {
		t.Run(fmt.Sprintf("Broadcast/%dB", bytes), func(t *testing.T) {
			comms := newComms(t, nw, n)
			count := bytes / 4
			bcast := func(ctx context.Context, r int, c *collective.Comm, i, count, root int) error {
				x := make([]int32, count)
				if r == root {
					for j := range x {
						x[j] = int32(i*1000 + j)
					}
				}
				if err := collective.Broadcast(ctx, c, x, x, root); err != nil {
					return err
				}
				for j := range x {
					if x[j] != int32(i*1000+j) {
						return fmt.Errorf("call %d: element %d is %d, want %d", i, j, x[j], i*1000+j)
					}
				}
				for j := range x { // the root's buffer is reusable: scribble on it
					x[j] = -1
				}
				return nil
			}
			loop := func(from int) {
				t.Helper()
				for r, err := range each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					for i := from; i < from+loops; i++ {
						if err := bcast(ctx, r, c, i, count, 0); err != nil {
							return err
						}
					}
					return nil
				}) {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
				}
			}
			barrier := func() {
				t.Helper()
				for r, err := range each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					return c.Barrier(ctx)
				}) {
					if err != nil {
						t.Fatalf("rank %d: Barrier: %v", r, err)
					}
				}
			}
			loop(0)
			eager := []uint64{loops - eagerAfter, loops - eagerAfter, loops - eagerAfter, loops - eagerAfter}
			requireEager(t, comms, eager)
			// A Barrier keeps the run: every call of the loop after it
			// returns early, none runs the confirmed protocol.
			barrier()
			loop(loops)
			for r := range eager {
				eager[r] += loops
			}
			requireEager(t, comms, eager)

			// One rank's count differs in an eager call of the root: rank 3,
			// then rank 2 (which only the root hears from directly: rank 1
			// depends on it only through the root, so rank 1 may succeed in
			// the call and fails in the next).
			for _, odd := range []int{3, 2} {
				if odd == 3 { // the mismatch is found as well in the call after a Barrier
					barrier()
				}
				errs := each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					k := count
					if r == odd {
						k++
					}
					return bcast(ctx, r, c, 99, k, 0)
				})
				if errs[0] != nil {
					t.Fatalf("root: the eager call failed in the call: %v", errs[0])
				}
				if errs[odd] == nil || !strings.Contains(errs[odd].Error(), "mismatch") {
					t.Fatalf("rank %d, the odd one: %v", odd, errs[odd])
				}
				var ok []int
				for r, err := range errs {
					if err == nil { // an eager return: a confirmed call would fail
						ok = append(ok, r)
						eager[r]++
					}
				}
				t.Logf("rank %d odd: ranks %v succeeded in the call", odd, ok)
				requireEager(t, comms, eager)
				errs = each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					return bcast(ctx, r, c, 100, count, 0)
				})
				for r, err := range errs {
					if err == nil {
						t.Fatalf("rank %d: the call after the mismatch succeeded", r)
					}
				}
				if s := errs[0].Error(); !strings.Contains(s, "mismatch") || !strings.Contains(s, "earlier call") {
					t.Fatalf("root's next call does not name the earlier mismatch: %v", errs[0])
				}
				t.Logf("the root's next call: %v", errs[0])
				// Confirmed again for eagerAfter calls, then eager.
				loop(200)
				for r := range eager {
					eager[r] += loops - eagerAfter
				}
				requireEager(t, comms, eager)
			}

			// The roots split in halves: ranks 0, 1 take 0, ranks 2, 3 take 2.
			errs := each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
				return bcast(ctx, r, c, 300, count, r/2*2)
			})
			if errs[0] != nil {
				t.Fatalf("root: the eager call failed in the call: %v", errs[0])
			}
			// Ranks 2 and 3 see the mismatch; rank 1, eager, has its data
			// from rank 0 and may return nil (its Close reports it).
			for r := 2; r < n; r++ {
				if errs[r] == nil {
					t.Fatalf("rank %d: no error in the call with split roots", r)
				}
			}
			// The root makes no further call: Close reports it; so does rank
			// 1's if it returned nil.
			if err := comms[0].Close(); err == nil || !strings.Contains(err.Error(), "mismatch") {
				t.Fatalf("root's Close: %v, want the earlier call's mismatch", err)
			} else {
				t.Logf("the root's Close: %v", err)
			}
			if errs[1] == nil {
				if err := comms[1].Close(); err == nil || !strings.Contains(err.Error(), "mismatch") {
					t.Fatalf("rank 1 returned nil from the call; its Close: %v, want the call's mismatch", err)
				}
			}
		})
	}
	t.Run("Gather", func(t *testing.T) { // 2 KiB a rank: direct, its senders eager
		comms := newComms(t, nw, n)
		for r, err := range each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
			send, recv := make([]int32, 512), make([]int32, 512*n)
			for i := range loops {
				for j := range send {
					send[j] = int32(i*10000 + r*1000 + j)
				}
				if err := collective.Gather(ctx, c, send, recv, 2); err != nil {
					return err
				}
				clear(send) // reusable on return
				if r != 2 {
					continue
				}
				for p := range n {
					for j := range 512 {
						if got, want := recv[p*512+j], int32(i*10000+p*1000+j); got != want {
							return fmt.Errorf("call %d: rank %d's element %d is %d, want %d", i, p, j, got, want)
						}
					}
				}
			}
			return nil
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		for r, c := range comms {
			want := uint64(loops - eagerAfter)
			if r == 2 {
				want = 0
			}
			if got := c.EagerReturns(); got != want {
				t.Fatalf("rank %d: %d eager returns, want %d", r, got, want)
			}
		}
	})
	t.Run("Scatter", func(t *testing.T) {
		comms := newComms(t, nw, n)
		for r, err := range each(comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
			for i := range loops {
				send := make([]int32, 2*n)
				if r == 1 {
					for j := range send {
						send[j] = int32(i*100 + j)
					}
				}
				recv := make([]int32, 2)
				if err := collective.Scatter(ctx, c, send, recv, 1); err != nil {
					return err
				}
				if recv[0] != int32(i*100+2*r) || recv[1] != int32(i*100+2*r+1) {
					return fmt.Errorf("call %d: got %v", i, recv)
				}
				clear(send)
			}
			return nil
		}) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		for r, c := range comms {
			want := uint64(0)
			if r == 1 {
				want = loops - eagerAfter
			}
			if got := c.EagerReturns(); got != want {
				t.Fatalf("rank %d: %d eager returns, want %d", r, got, want)
			}
		}
	})
}

// requireEager checks that each rank r returned early want[r] times so
// far.
func requireEager(t *testing.T, comms []*collective.Comm, want []uint64) {
	t.Helper()
	for r, c := range comms {
		if got := c.EagerReturns(); got != want[r] {
			t.Fatalf("rank %d: %d eager returns, want %d", r, got, want[r])
		}
	}
}

// newComms makes a communicator on each endpoint of a new world, closed
// at the test's end.
func newComms(t *testing.T, nw NewWorld, n int) []*collective.Comm {
	t.Helper()
	comms := make([]*collective.Comm, n)
	for r, ep := range nw(t, n) {
		c, err := collective.New(ep, 7, collective.Config{})
		if err != nil {
			t.Fatal(err)
		}
		comms[r] = c
		t.Cleanup(func() { _ = c.Close() })
	}
	return comms
}
