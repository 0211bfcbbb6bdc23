package collective_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// OnOpEnd receives every ended operation's record, failed ones too, on
// the communicator and on those Split makes from it; nil stops it.
func TestOnOpEnd(t *testing.T) {
	comms := newComms(t, 2, collective.Config{})
	var mu sync.Mutex
	var got []collective.OpRecord
	comms[0].OnOpEnd(func(r collective.OpRecord) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	})
	errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 100)
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if err := collective.Broadcast(ctx, c, x, x, 1); err != nil {
			return err
		}
		_ = collective.AllReduce(ctx, c, x, make([]float32, 99+r), collective.Sum) // fails on rank 0
		sub, err := c.Split(ctx, 0, r)
		if err != nil {
			return err
		}
		return sub.Barrier(ctx)
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	mu.Lock()
	defer mu.Unlock()
	var kinds []collective.Kind
	for _, r := range got {
		kinds = append(kinds, r.Kind)
		require.Equal(t, 0, r.Rank)
		require.False(t, r.End.IsZero())
		require.False(t, r.End.Before(r.Start))
		require.NotEqual(t, collective.OpRunning, r.State)
	}
	require.GreaterOrEqual(t, len(got), 4)
	require.Equal(t, []collective.Kind{collective.KindAllReduce, collective.KindBroadcast, collective.KindAllReduce}, kinds[:3])
	require.Equal(t, 400, got[0].Bytes)
	require.Equal(t, collective.OpFailed, got[2].State)
	require.Equal(t, collective.KindBarrier, kinds[len(kinds)-1], "the split communicator's barrier")
	require.NotEqual(t, got[0].Comm, got[len(got)-1].Comm)

	comms[0].OnOpEnd(nil)
	n := len(got)
	mu.Unlock()
	errs = onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error { return c.Barrier(ctx) })
	mu.Lock()
	require.NoError(t, errs[0])
	require.Len(t, got, n)
}
