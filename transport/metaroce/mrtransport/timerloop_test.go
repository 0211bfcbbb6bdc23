package mrtransport

import (
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// goroutinesCreated returns how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestTimerStartsNoGoroutines fires an endpoint's timer 200 times: its
// runs come from the engine's one timer goroutine, where time.AfterFunc
// started a goroutine per firing.
func TestTimerStartsNoGoroutines(t *testing.T) {
	eps, err := NewLocalWorld(testCtx(t), 1, Config{})
	require.NoError(t, err)
	defer eps[0].Close()
	e := eps[0].eng
	const fires = 200
	before := goroutinesCreated()
	for i := range fires {
		runs := e.st.timerRuns.Load()
		e.lock()
		e.armed = 0
		e.timer.Reset(0)
		e.mu.Unlock()
		deadline := time.Now().Add(5 * time.Second)
		for e.st.timerRuns.Load() == runs {
			require.True(t, time.Now().Before(deadline), "firing %d did not run", i)
			time.Sleep(50 * time.Microsecond)
		}
	}
	created := goroutinesCreated() - before
	require.Less(t, created, uint64(fires/4), "goroutines started for %d timer runs", fires)
}

// TestRearmFollowsALaterDeadline checks that the engine's timer follows
// the core's next deadline when it moves later (a paced datagram or a held
// ACK that a reader sent first): left at the earlier one, it would fire
// for nothing.
func TestRearmFollowsALaterDeadline(t *testing.T) {
	ctx := testCtx(t)
	eps, err := NewLocalWorld(ctx, 2, Config{})
	require.NoError(t, err)
	defer func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	}()
	allReduceSum(t, newComms(t, eps), 1<<10)
	e := eps[0].eng
	e.lock()
	defer e.mu.Unlock()
	next, ok := e.core.NextTimeout()
	require.True(t, ok, "an open connection has a deadline")
	now := e.now()
	e.armed = next - time.Millisecond // set for a deadline that has gone
	e.timer.Reset(time.Hour)
	e.rearm(now)
	require.Equal(t, next, e.armed)
}
