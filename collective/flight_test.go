package collective_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// TestFlightRecordKeepsRecentOperations checks the records of ended
// operations: their order, kind, size and state, a failure's error, and
// the ring's bound.
func TestFlightRecordKeepsRecentOperations(t *testing.T) {
	comms := newComms(t, 2, collective.Config{})
	errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 100)
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if err := collective.Broadcast(ctx, c, x, x, 1); err != nil {
			return err
		}
		_ = collective.AllReduce(ctx, c, x, make([]float32, 99+r), collective.Sum) // fails on rank 0
		return nil
	})
	require.NoError(t, errs[0])
	rec := comms[0].FlightRecord()
	require.Len(t, rec, 3)
	require.Equal(t, collective.KindAllReduce, rec[0].Kind)
	require.Equal(t, collective.OpDone, rec[0].State)
	require.Equal(t, 400, rec[0].Bytes)
	require.Equal(t, collective.KindBroadcast, rec[1].Kind)
	require.Equal(t, 1, rec[1].Root)
	require.Equal(t, collective.OpFailed, rec[2].State)
	require.Contains(t, rec[2].Err, "recv buffer")
	for i, r := range rec {
		require.Equal(t, uint64(i), r.Seq)
		require.False(t, r.End.Before(r.Start))
	}
	require.Empty(t, collective.Pending(rec))

	errs = onAll(t, comms, 60*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		for i := 0; i < collective.FlightRecords+10; i++ {
			if err := c.Barrier(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	rec = comms[1].FlightRecord()
	require.Len(t, rec, collective.FlightRecords)
	require.Equal(t, uint64(3+collective.FlightRecords+10-1), rec[len(rec)-1].Seq)
}

// TestStallReportNamesTheRankThatNeverCame has rank 3 of 4 never call an
// AllReduce: the ranks that talk to it report, past the stall threshold,
// that it never arrived, and go on waiting until their deadline; the
// errors at the deadline name it too, on the rank that does not talk to
// it through its neighbours' aborts.
func TestStallReportNamesTheRankThatNeverCame(t *testing.T) {
	const n, absent = 4, 3
	var mu sync.Mutex
	reports := map[int]collective.StallReport{}
	eps := inprocWorld(t, n)
	comms := make([]*collective.Comm, n)
	for r, ep := range eps {
		c, err := collective.New(ep, 1, collective.Config{StallTimeout: 200 * time.Millisecond, OnStall: func(s collective.StallReport) {
			mu.Lock()
			defer mu.Unlock()
			reports[r] = s
		}})
		require.NoError(t, err)
		comms[r] = c
	}
	start := time.Now()
	errs := onAll(t, comms[:absent], 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		// Rank 1, which does not talk to rank 3, waits longer: the error
		// of rank 3's neighbours, which names it, reaches it first.
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second+time.Duration(r%2)*time.Second)
		defer cancel()
		x := make([]float32, 1<<16)
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "context deadline exceeded", "rank %d", r) // its own, or a neighbour's abort for it
		require.ErrorContains(t, err, "rank 3 never arrived", "rank %d", r)
	}
	require.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the stall must not end the wait")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, absent, "every waiting rank reports its stall")
	named := 0
	for r, s := range reports {
		t.Logf("rank %d reported: %s", r, s)
		require.Equal(t, collective.KindAllReduce, s.Op.Kind, "rank %d", r)
		require.Equal(t, collective.OpRunning, s.Op.State, "rank %d", r)
		require.Equal(t, r, s.Op.Rank)
		require.GreaterOrEqual(t, time.Since(s.Op.Start), 200*time.Millisecond)
		require.Len(t, s.Pending, 1)
		if s.Culprit() == absent {
			named++
			require.Contains(t, s.String(), "rank 3 never arrived", "rank %d", r)
		}
		require.True(t, strings.HasPrefix(s.String(), "gocoll: stall: rank "), s.String())
	}
	// Rank 3's neighbours in the ring (2, and 0) talk to it directly.
	require.GreaterOrEqual(t, named, 2, "reports: %v", reports)
}
