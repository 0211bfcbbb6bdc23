package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoPeerTimeoutAfterOwnStall has both endpoints of a connection wait
// on each other (a receive posted each way for a message not sent yet),
// then stops them both for longer than PeerTimeout, as a loaded machine
// that leaves its processes unscheduled does (bench/rss.sh's storm over
// MetaRoCE saw all eight ranks stop for 1-2 s at once): no timer runs,
// nothing is read. When they run again, each comes to its timers late; it
// must not count the time it was not running as the peer's silence, but
// probe, hear the peer answer, and go on: no connection fails, and the
// receives complete once their messages are sent.
func TestNoPeerTimeoutAfterOwnStall(t *testing.T) {
	n := newTestNet(t, Config{Paths: 4})
	a, b := n.connect()
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 8)))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.runFor(500 * time.Millisecond)
	n.now += DefaultPeerTimeout + 500*time.Millisecond // both stopped
	n.runFor(3 * DefaultPeerTimeout)
	for i := range n.eps {
		for _, ev := range n.events[i] {
			require.NotEqual(t, EventClosed, ev.Kind, "endpoint %d: %v", i, ev.Err)
			require.NoError(t, ev.Err, "endpoint %d %v", i, ev.Kind)
		}
		require.Positive(t, n.eps[i].Stats().LateRuns, "endpoint %d", i)
		require.GreaterOrEqual(t, n.eps[i].Stats().Late, DefaultPeerTimeout, "endpoint %d", i)
	}
	require.NoError(t, n.eps[1].Send(n.now, b, 1, 1, pattern(8, 1)))
	require.NoError(t, n.eps[0].Send(n.now, a, 2, 2, pattern(8, 2)))
	n.runUntil(func() bool {
		_, ok0 := n.done(0, EventRecvDone, 1, 1)
		_, ok1 := n.done(1, EventRecvDone, 2, 2)
		return ok0 && ok1
	}, time.Second)
}

// TestPeerTimeoutAfterOwnStall is the same stall, after which endpoint 0
// no longer answers (its datagrams are lost): endpoint 1, waiting on it,
// still fails the connection with a PeerTimeoutError, within PeerTimeout
// of the stall's end; but not at once, as it would if the stall counted
// as silence (only the silence before the stall, at most a few keepalive
// periods, adds to the time after it).
func TestPeerTimeoutAfterOwnStall(t *testing.T) {
	n := newTestNet(t, Config{Paths: 4})
	_, b := n.connect()
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.runFor(500 * time.Millisecond)
	n.now += DefaultPeerTimeout + 500*time.Millisecond
	resumed := n.now
	n.drop = func(from, path int, b []byte) bool { return from == 0 }
	var at time.Duration
	n.runUntil(func() bool {
		for _, ev := range n.events[1] {
			if ev.Kind == EventClosed {
				require.ErrorIs(t, ev.Err, ErrPeerTimeout)
				at = n.now
				return true
			}
		}
		return false
	}, 2*DefaultPeerTimeout)
	require.GreaterOrEqual(t, at-resumed, DefaultPeerTimeout/2, "failed too soon after the stall")
	require.LessOrEqual(t, at-resumed, DefaultPeerTimeout+DefaultPeerTimeout/8)
}
