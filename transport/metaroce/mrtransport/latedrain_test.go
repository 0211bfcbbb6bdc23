package mrtransport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// TestLateTimerDrainsFirst: a timer that runs late (here the engine's
// mutex is held for 300 ms while rank 1 waits on a receive, so its
// keepalive timer, due every PeerTimeout/8 = 50 ms, comes ~250 ms late)
// reads what the sockets hold before the core's timers run: it counts as
// a late drain, not as a drain before a silence (PeerTimeout is far), and
// the connection lives on. Before, the engine drained only before a
// silence, so a retransmission timeout due while the process was not
// running fired on an ACK that waited unread in its socket.
func TestLateTimerDrainsFirst(t *testing.T) {
	linuxOnly(t, "draining the sockets (poller)")
	eps := newTestWorld(t, 2, Config{Paths: 1, Core: metaroce.Config{PeerTimeout: 400 * time.Millisecond}})
	e := eps[1].eng
	require.NotNil(t, e.spin, "no poller over loopback udpio sockets")
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}}
	buf := make([]byte, 64)
	rr := eps[1].Recv(0, tag, buf) // rank 1 waits on rank 0: keepalives every 50 ms
	time.Sleep(20 * time.Millisecond)
	before := e.st.lateDrains.Load()
	e.lock()
	time.Sleep(300 * time.Millisecond) // the engine does not run
	e.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for e.st.lateDrains.Load() == before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.Greater(t, e.st.lateDrains.Load(), before, "the late timer did not drain the sockets first")
	require.Zero(t, e.st.silenceDrains.Load(), "a 300 ms stall taken for a 400 ms silence")
	ctx := testCtx(t)
	_, err := eps[0].Send(1, tag, make([]byte, 64)).Wait(ctx)
	require.NoError(t, err)
	var n int
	n, err = rr.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, 64, n)
}
