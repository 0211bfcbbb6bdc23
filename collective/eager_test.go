package collective_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
)

// TestEagerRootInProcess runs the eager path's checks (collectivetest.RunEager)
// over the in-process transport.
func TestEagerRootInProcess(t *testing.T) {
	collectivetest.RunEager(t, inprocWorld)
}

// TestEagerRootAbort aborts on a root whose last call returned early and
// is still open: Abort ends that call at once, instead of waiting its 10 s
// drain for a call nobody runs, and the peers' next calls fail with
// ErrAborted.
func TestEagerRootAbort(t *testing.T) {
	comms := newComms(t, 4, collective.Config{})
	errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 2)
		for range 6 {
			if err := collective.Broadcast(ctx, c, x, x, 0); err != nil {
				return err
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	require.NotZero(t, comms[0].EagerReturns(), "the root never returned early")
	start := time.Now()
	require.NoError(t, comms[0].Abort())
	require.Less(t, time.Since(start), 5*time.Second, "Abort waited for the open eager call's drain")
	errs = onAll(t, comms[1:], 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		return c.Barrier(ctx)
	})
	for r, err := range errs {
		require.ErrorIs(t, err, collective.ErrAborted, "rank %d", r+1)
	}
}

// warmEager runs Broadcasts from rank 0 until its calls return early
// (steady state), on every rank.
func warmEager(ctx context.Context, c *collective.Comm, x []float32) error {
	for range 5 {
		if err := collective.Broadcast(ctx, c, x, x, 0); err != nil {
			return err
		}
	}
	return nil
}

// TestEagerAfterAsync: a rank (the root, then a receiver) begins an
// AllReduceAsync, then a blocking Broadcast of the steady state, before
// the AllReduce's goroutine ran (GOMAXPROCS 1, and the peers are well into
// the AllReduce already). The Broadcast must not return early: the
// AllReduce, begun first, would then settle it, waiting for the peers'
// confirmation of the Broadcast while the peers wait in the AllReduce for
// that rank, until Config.Timeout, on every rank. The same pattern runs
// three times.
func TestEagerAfterAsync(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, who := range []int{0, 3} {
		t.Run(fmt.Sprintf("rank%d", who), func(t *testing.T) {
			comms := newComms(t, 4, collective.Config{Timeout: 3 * time.Second})
			errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
				x := make([]float32, 2)
				if err := warmEager(ctx, c, x); err != nil {
					return err
				}
				for i := range 3 {
					send, recv := []float32{float32(r + 1)}, make([]float32, 1)
					if r == 0 {
						x[0] = float32(i)
					}
					if r == who {
						time.Sleep(20 * time.Millisecond) // the peers wait in the AllReduce
						h := collective.AllReduceAsync(ctx, c, send, recv, collective.Sum)
						if err := collective.Broadcast(ctx, c, x, x, 0); err != nil {
							return err
						}
						if err := h.Wait(ctx); err != nil {
							return err
						}
					} else {
						if err := collective.AllReduce(ctx, c, send, recv, collective.Sum); err != nil {
							return err
						}
						if err := collective.Broadcast(ctx, c, x, x, 0); err != nil {
							return err
						}
					}
					if x[0] != float32(i) {
						return fmt.Errorf("broadcast %d: got %v", i, x[0])
					}
					if recv[0] != 10 {
						return fmt.Errorf("allreduce %d: got %v, want 10", i, recv[0])
					}
				}
				return c.Close()
			})
			for r, err := range errs {
				require.NoError(t, err, "rank %d", r)
			}
		})
	}
}

// TestEagerSettleUnderShortContext: the peers enter a Broadcast 300 ms
// after the root returned early from it, and every rank then calls Barrier
// with a 200 ms context. The root's Barrier settles the Broadcast first;
// if its context ends while it waits, only the Barrier fails (with its
// own deadline), not the Broadcast, which matched on every rank (as under
// the confirmed protocol): the root keeps it open and settles it at its
// next call.
func TestEagerSettleUnderShortContext(t *testing.T) {
	comms := newComms(t, 4, collective.Config{Timeout: 5 * time.Second})
	bcast := make([]error, 4)
	errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 2)
		if err := warmEager(ctx, c, x); err != nil {
			return err
		}
		if r != 0 {
			time.Sleep(300 * time.Millisecond)
		}
		x[0] = 7
		if bcast[r] = collective.Broadcast(ctx, c, x, x, 0); bcast[r] == nil && x[0] != 7 {
			bcast[r] = fmt.Errorf("got %v", x[0])
		}
		bctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := c.Barrier(bctx)
		cancel()
		// The root's Barrier may fail by its deadline (or, on a loaded
		// machine, a peer's), never by a failure of the Broadcast.
		if r == 0 && err != nil && (errors.Is(err, collective.ErrAborted) || strings.Contains(err.Error(), "buffer was reusable, failed")) {
			return fmt.Errorf("the root's Barrier failed the earlier Broadcast: %w", err)
		}
		// The communicator goes on: the root settles the Broadcast here if
		// its Barrier did not.
		x[0] = 9
		if err := collective.Broadcast(ctx, c, x, x, 0); err != nil || x[0] != 9 {
			return fmt.Errorf("next broadcast: %v (got %v)", err, x[0])
		}
		return c.Close()
	})
	for r := range errs {
		require.NoError(t, bcast[r], "rank %d's Broadcast", r)
		require.NoError(t, errs[r], "rank %d", r)
	}
}

// TestEagerForwarderKeepsItsSend: in a steady-state 8 KiB dissemination
// Broadcast (in process: not shared memory), rank 2 forwards the data to
// rank 3 from its own buffer (beyond what rides in a header). Rank 3
// enters the last call 50 ms late, and every rank scribbles on its buffer
// as soon as its call returns: rank 2, eager, must wait for its send to
// rank 3 before it returns, or rank 3 gets the scribble.
func TestEagerForwarderKeepsItsSend(t *testing.T) {
	comms := newComms(t, 4, collective.Config{})
	errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 2048)
		for i := range 6 {
			if r == 0 {
				for j := range x {
					x[j] = float32(i*10000 + j)
				}
			}
			if r == 3 && i == 5 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := collective.Broadcast(ctx, c, x, x, 0); err != nil {
				return err
			}
			for j := range x {
				if x[j] != float32(i*10000+j) {
					return fmt.Errorf("call %d: element %d is %v", i, j, x[j])
				}
			}
			for j := range x {
				x[j] = -1
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	require.Equal(t, uint64(6-3), comms[2].EagerReturns(), "rank 2's calls did not return early")
}
