package store

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLivenessFakeClock(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	l, err := NewLiveness(3, 100*time.Millisecond, start)
	require.NoError(t, err)

	require.Empty(t, l.Stale(at(99)), "nobody is stale before the timeout")
	require.NoError(t, l.Observe(at(50), 0, 1))
	require.NoError(t, l.Observe(at(60), 1, 7))
	require.Equal(t, []int{2}, l.Stale(at(100)), "rank 2 never beat")

	require.NoError(t, l.Observe(at(120), 0, 2))
	require.NoError(t, l.Observe(at(140), 1, 7)) // no change: not a beat
	require.Equal(t, []int{2}, l.Stale(at(159)))
	require.Equal(t, []int{1, 2}, l.Stale(at(160)), "rank 1's counter stopped at 60 ms")

	require.NoError(t, l.Observe(at(170), 1, 3)) // restarted, counter went down
	require.NoError(t, l.Observe(at(170), 2, 1))
	require.Empty(t, l.Stale(at(219)))
	require.Equal(t, []int{0}, l.Stale(at(220)))

	require.ErrorIs(t, l.Observe(at(0), 3, 1), ErrInvalid)
	require.ErrorIs(t, l.Observe(at(0), -1, 1), ErrInvalid)
	_, err = NewLiveness(0, time.Second, start)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewLiveness(1, 0, start)
	require.ErrorIs(t, err, ErrInvalid)
}

func TestHeartbeatCounts(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s := f.handle()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- Heartbeat(ctx, s, 4, time.Millisecond) }()
		require.Eventually(t, func() bool {
			v, ok, err := s.TryGet(t.Context(), HeartbeatKey(4))
			n, _ := strconv.Atoi(string(v))
			return err == nil && ok && n >= 3
		}, long, time.Millisecond)
		cancel()
		require.NoError(t, <-done, "ending ctx ends the heartbeat without error")
		require.Equal(t, "hb/4", HeartbeatKey(4))
	})
}

func TestHeartbeatStoreError(t *testing.T) {
	m := NewMemStore(Limits{})
	require.NoError(t, m.Set(t.Context(), HeartbeatKey(0), []byte("not a number")))
	err := Heartbeat(t.Context(), m, 0, time.Millisecond)
	require.ErrorIs(t, err, ErrNotCounter)
	require.ErrorIs(t, Heartbeat(t.Context(), m, 0, 0), ErrInvalid)
	require.NoError(t, m.Close())
	require.ErrorIs(t, Watch(t.Context(), m, 1, time.Second, time.Millisecond, func([]int) {}), ErrClosed)
}

// TestWatch checks that a rank that never beats is reported, and that it
// leaves the report once it beats.
func TestWatch(t *testing.T) {
	m := NewMemStore(Limits{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for r := range 2 {
		go func() { _ = Heartbeat(ctx, m, r, time.Millisecond) }()
	}
	reports := make(chan []int, 100)
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, m, 3, 200*time.Millisecond, 2*time.Millisecond, func(stale []int) {
			select {
			case reports <- stale:
			default: // never block Watch
			}
		})
	}()
	waitReport := func(want func([]int) bool) {
		t.Helper()
		for {
			select {
			case r := <-reports:
				if want(r) {
					return
				}
			case <-time.After(long):
				t.Fatal("no such report")
			}
		}
	}
	waitReport(func(r []int) bool { return slices.Contains(r, 2) })
	go func() { _ = Heartbeat(ctx, m, 2, time.Millisecond) }()
	waitReport(func(r []int) bool { return !slices.Contains(r, 2) })
	cancel()
	require.NoError(t, <-done)
}
