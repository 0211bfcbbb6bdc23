package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// minRTTOf is ConnMinRTT's figure worked out from ConnStats's paths.
func minRTTOf(paths []PathStats) time.Duration {
	low := time.Duration(0)
	for _, ps := range paths {
		rtt := ps.FabricMinRTT
		if rtt <= 0 {
			rtt = ps.MinRTT
		}
		if rtt > 0 && (low == 0 || rtt < low) {
			low = rtt
		}
	}
	return low
}

// TestConnMinRTT: ConnMinRTT gives what ConnStats's paths give, on a
// connection before and after it has samples, on a connection that ended
// at the peer's Close (its remnant), and false for an unknown one.
func TestConnMinRTT(t *testing.T) {
	n := newTestNet(t, Config{Paths: 3, MaxDatagram: 1500})
	a, b := n.connect()
	check := func(ep int, id ConnID) time.Duration {
		t.Helper()
		_, paths, ok := n.eps[ep].ConnStats(id, nil)
		got, gotOK := n.eps[ep].ConnMinRTT(id)
		require.Equal(t, ok, gotOK)
		require.Equal(t, minRTTOf(paths), got)
		return got
	}
	check(0, a)
	const size = 64 << 10
	buf := make([]byte, size)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(size, 5)))
	n.runUntil(func() bool { _, ok := n.done(0, EventSendDone, 1, 1); return ok }, 5*time.Second)
	require.Positive(t, check(0, a), "the sender has RTT samples")
	check(1, b)

	require.NoError(t, n.eps[0].Close(n.now, a))
	n.runUntil(func() bool { return n.has(1, EventClosed) }, time.Second)
	_, _, ok := n.eps[1].ConnStats(b, nil)
	require.True(t, ok, "the closed connection's remnant")
	check(1, b)
	_, ok = n.eps[1].ConnMinRTT(b + 1000)
	require.False(t, ok)
}
