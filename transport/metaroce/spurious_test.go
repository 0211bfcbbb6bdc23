package metaroce

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stalledAcks runs a one-path connection on which endpoint 1's datagrams
// (its ACKs) are held until stallEnd, as a receiver whose process was not
// scheduled after it read the data, or whose ACKs waited unread in the
// sender's socket: endpoint 0's retransmission timer fires while nothing
// was lost. With drop, the data in flight and all endpoint 0 sends in the
// stall is lost instead: the timeout was right. It returns endpoint 0's
// path statistics at the end and the lateness its RTO allows for.
func stalledAcks(t *testing.T, drop bool) (PathStats, time.Duration) {
	n := newTestNet(t, Config{Paths: 1})
	a, b := n.connect()
	const size = 64 << 10
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, size)))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(size, 1)))
	n.runUntil(func() bool { // the data is flying
		_, ps, _ := n.eps[0].ConnStats(a, nil)
		return ps[0].Inflight > 0
	}, time.Second)
	stallEnd := n.now + 300*time.Millisecond
	if drop { // the data in flight and all sent in the stall is lost
		n.flights = slices.DeleteFunc(n.flights, func(f flight) bool { return f.to == 1 })
		n.drop = func(from, path int, b []byte) bool { return from == 0 && n.now < stallEnd }
	}
	for n.now < stallEnd {
		require.True(t, n.step())
		for i := range n.flights {
			if n.flights[i].to == 0 {
				n.flights[i].at = max(n.flights[i].at, stallEnd)
			}
		}
	}
	n.drop = nil
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, 5*time.Second)
	n.runFor(50 * time.Millisecond)
	_, ps, _ := n.eps[0].ConnStats(a, nil)
	require.Positive(t, ps[0].Timeouts, "the stall fired no retransmission timeout")
	return ps[0], n.eps[0].conns[a].paths[0].lateness()
}

// TestSpuriousTimeoutCounted: the ACKs of the original packets, arriving
// after the sender's timeout, show it was spurious: it is counted as such.
func TestSpuriousTimeoutCounted(t *testing.T) {
	ps, late := stalledAcks(t, false)
	require.Equal(t, int64(1), ps.SpuriousTimeouts)
	// The ACKs came 300 ms late, less the RTO: the RTO allows for the
	// bound since.
	require.Equal(t, maxLate, late)
}

// TestRealTimeoutNotSpurious: the same stall with the data lost: the
// ACKs that follow cover only the resends, and nothing is counted.
func TestRealTimeoutNotSpurious(t *testing.T) {
	ps, late := stalledAcks(t, true)
	require.Zero(t, ps.SpuriousTimeouts)
	require.Zero(t, late, "a right timeout taught the RTO a lateness")
}

// TestLatenessSharedAndForgotten: the lateness a spurious timeout showed
// on one path counts in the RTO of every path of its connection, and is
// forgotten once ACKs come two lateWindows later without another.
func TestLatenessSharedAndForgotten(t *testing.T) {
	cfg := Config{MinRTO: time.Microsecond, MaxRTO: time.Second}
	c := &conn{paths: []*path{{}, {}}}
	for _, p := range c.paths {
		p.rtt.seed(time.Millisecond, 0)
		p.rtt.has = true
	}
	before := c.paths[1].baseRTO(&cfg)
	now := time.Second
	c.paths[0].noteLate(3*time.Millisecond, now)
	c.paths[0].noteLate(-time.Millisecond, now) // our own stall: nothing
	c.shareLate(c.paths[0], now)
	for i, p := range c.paths {
		require.Equal(t, 3*time.Millisecond, p.lateness(), "path %d", i)
	}
	require.Equal(t, before+3*time.Millisecond, c.paths[1].baseRTO(&cfg))
	c.paths[0].noteLate(time.Hour, now)
	require.Equal(t, maxLate, c.paths[0].lateness(), "not bounded")
	c.paths[1].noteLate(0, now+lateWindow)
	require.Equal(t, 3*time.Millisecond, c.paths[1].lateness(), "forgotten after one window")
	c.paths[1].noteLate(0, now+2*lateWindow)
	require.Zero(t, c.paths[1].lateness(), "kept after two windows")
}

// TestLatenessNotOnLongPaths: a long path (base RTT of longAckRTT or
// more) learns no lateness, neither its own nor one its connection's short
// path shares.
func TestLatenessNotOnLongPaths(t *testing.T) {
	c := &conn{paths: []*path{{}, {}}}
	for i, p := range c.paths {
		p.rtt.seed(time.Millisecond, 0)
		p.rtt.has = true
		p.rtt.min = time.Duration(i) * 4 * longAckRTT // path 0 short, path 1 long
	}
	now := time.Second
	c.paths[0].noteLate(3*time.Millisecond, now)
	c.shareLate(c.paths[0], now)
	require.Equal(t, 3*time.Millisecond, c.paths[0].lateness())
	require.Zero(t, c.paths[1].lateness(), "shared with a long path")
	c.paths[1].noteLate(3*time.Millisecond, now)
	require.Zero(t, c.paths[1].lateness(), "a long path learnt its own")
}
