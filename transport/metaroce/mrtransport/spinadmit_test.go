package mrtransport

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

// TestSpinAdmitBounds checks spinAdmit's two rules: at most maxSpinners
// spin at once, and after wastedRun wasted spins of small receives in a
// row only every probeEvery-th such waiter spins, until a spin pays; bulk
// waits neither count in the run nor are held by it.
func TestSpinAdmitBounds(t *testing.T) {
	var a spinAdmit
	for i := range maxSpinners {
		require.True(t, a.enter(i%2 == 0), "spinner %d", i)
	}
	require.False(t, a.enter(true), "one more than maxSpinners")
	require.False(t, a.enter(false), "one more than maxSpinners")
	a.leave(true, true)
	require.True(t, a.enter(false), "a place freed")
	for range maxSpinners {
		a.leave(false, true)
	}

	for range 2 * wastedRun {
		require.True(t, a.enter(false), "bulk waits do not move the run")
		a.leave(false, false)
	}
	for range wastedRun {
		require.True(t, a.enter(true))
		a.leave(true, false)
	}
	admitted := 0
	for range 2 * probeEvery {
		require.True(t, a.enter(false), "a bulk wait spins whatever the run")
		a.leave(false, false)
		if a.enter(true) {
			admitted++
			a.leave(true, false)
		}
	}
	require.Equal(t, 2, admitted, "after %d wasted spins, small waiters spinning of %d", wastedRun, 2*probeEvery)
	for !a.enter(true) {
	}
	a.leave(true, true) // a probe paid: every waiter spins again
	for range probeEvery {
		require.True(t, a.enter(true))
		a.leave(true, true)
	}
}

// TestWastedSpinsStop checks that an endpoint whose waiters' spins keep
// ending without their message stops spinning most waits
// (EngineStats.SpinsSkipped): 40 waits in turn on receives nothing
// answers spin wastedRun times, then once every probeEvery.
func TestWastedSpinsStop(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{SpinWait: 20 * time.Microsecond})
	if eps[0].eng.spin == nil {
		t.Skip("no spinner on this system")
	}
	const waits = 40
	buf := make([]byte, 64)
	for i := range waits {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 11, Op: uint64(i)}}
		r := eps[0].Recv(1, tag, buf)
		require.False(t, r.(*request).Spin(context.Background()), "wait %d: nothing was sent", i)
		r.Cancel()
	}
	st := eps[0].Stats().Engine
	want := int64(waits - wastedRun - (waits-wastedRun)/probeEvery)
	require.Equal(t, want, st.SpinsSkipped, "waits that did not spin of %d (stats %+v)", waits, st)
}
