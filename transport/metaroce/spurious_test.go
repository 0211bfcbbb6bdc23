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
// path statistics at the end.
func stalledAcks(t *testing.T, drop bool) PathStats {
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
	return ps[0]
}

// TestSpuriousTimeoutCounted: the ACKs of the original packets, arriving
// after the sender's timeout, show it was spurious: it is counted as such.
func TestSpuriousTimeoutCounted(t *testing.T) {
	ps := stalledAcks(t, false)
	require.Equal(t, int64(1), ps.SpuriousTimeouts)
}

// TestRealTimeoutNotSpurious: the same stall with the data lost: the
// ACKs that follow cover only the resends, and nothing is counted.
func TestRealTimeoutNotSpurious(t *testing.T) {
	ps := stalledAcks(t, true)
	require.Zero(t, ps.SpuriousTimeouts)
}
