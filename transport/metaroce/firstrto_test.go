package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// TestFreshPathFirstRTOFollowsConnection: on a two-path connection whose
// path 0 measures its RTT (20 us here), every DATA datagram on path 1 is
// lost until path 1's first timeout, so path 1 has no sample of its own
// and only its retransmission timer finds the loss. That timer follows
// what path 0 measured (a few of its RTOs), not initialRTO's 1 s: the
// message completes within a few milliseconds of virtual time, after
// exactly one timeout on path 1. (Before the fix: 1 s.)
func TestFreshPathFirstRTOFollowsConnection(t *testing.T) {
	n := newTestNet(t, Config{Paths: 2, MaxDatagram: 1500})
	lost := 0
	var a ConnID
	n.drop = func(from, path int, b []byte) bool {
		if from != 0 || path != 1 || wire.Type(b[1]) != wire.TypeData {
			return false
		}
		_, ps, _ := n.eps[0].ConnStats(a, nil)
		if ps[1].Timeouts > 0 {
			return false
		}
		lost++
		return true
	}
	a, b := n.connect()
	const size = 8 << 10
	buf := make([]byte, size)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	start := n.now
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(size, 3)))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, 5*time.Second)
	took := n.now - start
	require.Positive(t, lost, "path 1 lost no DATA: the test does not test")
	require.Equal(t, pattern(size, 3), buf)
	_, ps, _ := n.eps[0].ConnStats(a, nil)
	t.Logf("took %v (virtual), %d DATA lost on path 1; path 1: %+v", took, lost, ps[1])
	require.Equal(t, int64(1), ps[1].Timeouts, "path 1's loss was found by its timer")
	require.Less(t, took, 10*time.Millisecond, "path 1's first RTO ignored path 0's samples")
}
