package collective_test

import (
	"context"
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
