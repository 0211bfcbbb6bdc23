package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// A peer whose port the network reports closed fails the connection
// PeerGoneGrace after the first report (a second one does not extend
// it), long before the idle timeout: the posted receive and the pending
// send fail with ErrPeerGone, and no CLOSE goes to the dead peer.
func TestPeerGoneFailsTheConnection(t *testing.T) {
	n := newTestNet(t, Config{})
	a, _ := n.connect()
	// Node 1 dies: nothing reaches it, and it sends nothing.
	var closes int
	n.drop = func(from, _ int, data []byte) bool {
		if h, _, err := wire.Open(data); err == nil && h.Type == wire.TypeClose {
			closes++
		}
		return true
	}
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 10)))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, pattern(5000, 1)))
	reported := n.now
	require.True(t, n.eps[0].HandlePeerGone(n.now, 1))
	n.runUntil(func() bool { return n.now > reported }, time.Second) // a resend is due first
	require.Less(t, n.now, reported+PeerGoneGrace)
	require.False(t, n.has(0, EventClosed))
	require.True(t, n.eps[0].HandlePeerGone(n.now, 1))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	require.Equal(t, reported+PeerGoneGrace, n.now)
	for _, ev := range n.events[0] {
		if ev.Kind == EventClosed {
			require.ErrorIs(t, ev.Err, ErrPeerGone)
		}
	}
	ev, ok := n.done(0, EventRecvDone, 1, 1)
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrPeerGone)
	ev, ok = n.done(0, EventSendDone, 1, 2)
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrPeerGone)
	require.Empty(t, n.eps[0].Conns())
	require.Zero(t, closes, "a CLOSE was sent to a closed port")
	require.False(t, n.eps[0].HandlePeerGone(n.now, 1), "no connection is left")
}

// A peer that closes gracefully, whose CLOSE arrives after the report
// that its port is closed but within the grace, ends the connection as a
// close.
func TestPeerGoneAfterCloseIsAClose(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 10)))
	n.runFor(time.Millisecond)
	n.delay = time.Millisecond // the CLOSE is slow
	require.NoError(t, n.eps[1].Close(n.now, b))
	n.flush()
	require.True(t, n.eps[0].HandlePeerGone(n.now, 1))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	ev, _ := n.done(0, EventRecvDone, 1, 1)
	require.ErrorIs(t, ev.Err, ErrPeerClosed)
}

// A connection still setting up is left to its handshake, which times out
// as before; and a report about a node with no connection changes
// nothing.
func TestPeerGoneLeavesHandshakesAlone(t *testing.T) {
	n := newTestNet(t, Config{IdleTimeout: 20 * time.Millisecond})
	n.drop = func(int, int, []byte) bool { return true }
	_, err := n.eps[0].Connect(n.now, 1)
	require.NoError(t, err)
	n.flush()
	require.False(t, n.eps[0].HandlePeerGone(n.now, 1))
	require.False(t, n.eps[0].HandlePeerGone(n.now, 7))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	require.ErrorIs(t, n.events[0][0].Err, ErrIdleTimeout)
	require.Equal(t, 20*time.Millisecond, n.now)
}

// firstProbe runs n until endpoint 0 sends a keepalive PROBE (not a
// reply) and returns when it did, counted from start.
func firstProbe(t *testing.T, n *testNet, start time.Duration) time.Duration {
	t.Helper()
	sent := time.Duration(-1)
	n.drop = func(from, _ int, data []byte) bool {
		h, body, err := wire.Open(data)
		var pr wire.Probe
		if err == nil && from == 0 && h.Type == wire.TypeProbe && wire.DecodeProbe(h, body, &pr) == nil && !pr.Reply && sent < 0 {
			sent = n.now
		}
		return false
	}
	n.runUntil(func() bool { return sent >= 0 }, 10*time.Second)
	return sent - start
}

// A connection probes a silent peer every IdleTimeout/4, and every
// IdleTimeout/16 while a receive waits for the peer, so that a dead peer's
// closed port is found sooner.
func TestKeepaliveSoonerWhileReceiving(t *testing.T) {
	cfg := Config{IdleTimeout: 1600 * time.Millisecond}
	n := newTestNet(t, cfg)
	n.connect()
	idle := firstProbe(t, n, n.now)
	require.GreaterOrEqual(t, idle, cfg.IdleTimeout/4-time.Millisecond)

	n = newTestNet(t, cfg)
	a, _ := n.connect()
	start := n.now
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 10)))
	waiting := firstProbe(t, n, start)
	require.GreaterOrEqual(t, waiting, cfg.IdleTimeout/16)
	require.LessOrEqual(t, waiting, cfg.IdleTimeout/8)
	t.Logf("first probe after %v idle, %v with a receive posted", idle, waiting)
}

// A stale report that a live peer's port is closed (the network's answer
// to a datagram sent before the peer's socket opened, read after the
// connection was set up) does not fail the connection: the report probes
// the peer, which answers, and that cancels it. A later report of a peer
// that then dies still fails the connection.
func TestStalePeerGoneIsCancelled(t *testing.T) {
	n := newTestNet(t, Config{Paths: 3})
	a, b := n.connect()
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 10)))
	reported := n.now
	require.True(t, n.eps[0].HandlePeerGone(n.now, 1))
	n.runFor(2 * PeerGoneGrace)
	require.False(t, n.has(0, EventClosed), "a live peer's connection failed on a stale report")
	require.Greater(t, n.now, reported+PeerGoneGrace)
	require.NoError(t, n.eps[1].Send(n.now, b, 1, 1, pattern(10, 3)))
	n.runUntil(func() bool { _, ok := n.done(0, EventRecvDone, 1, 1); return ok }, time.Second)
	ev, _ := n.done(0, EventRecvDone, 1, 1)
	require.NoError(t, ev.Err)

	n.drop = func(int, int, []byte) bool { return true } // now it dies
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 2, make([]byte, 10)))
	n.runFor(time.Millisecond) // what it sent before has arrived
	reported = n.now
	require.True(t, n.eps[0].HandlePeerGone(n.now, 1))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	require.Equal(t, reported+PeerGoneGrace, n.now)
	ev, _ = n.done(0, EventRecvDone, 1, 2)
	require.ErrorIs(t, ev.Err, ErrPeerGone)
}
