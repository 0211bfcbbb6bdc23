package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ConnectDatagram's limit holds both ways: neither side sends a datagram
// above it, though both endpoints accept 9000 bytes.
func TestConnectDatagramLimitsBothSides(t *testing.T) {
	n := newTestNet(t, Config{MaxDatagram: 9000})
	largest := [2]int{}
	n.drop = func(from, _ int, b []byte) bool {
		largest[from] = max(largest[from], len(b))
		return false
	}
	a, err := n.eps[0].ConnectDatagram(n.now, 1, 1400)
	require.NoError(t, err)
	n.runUntil(func() bool { return n.has(0, EventConnected) && n.has(1, EventAccepted) }, time.Second)
	var b ConnID
	for _, ev := range n.events[1] {
		if ev.Kind == EventAccepted {
			b = ev.Conn
		}
	}
	msg := pattern(200_000, 3)
	for dir, ids := range [2][2]ConnID{{a, b}, {b, a}} {
		buf := make([]byte, len(msg))
		stream := uint64(10 + dir)
		require.NoError(t, n.eps[1-dir].PostRecv(n.now, ids[1], stream, 1, buf))
		require.NoError(t, n.eps[dir].Send(n.now, ids[0], stream, 1, msg))
		n.runUntil(func() bool { _, ok := n.done(1-dir, EventRecvDone, stream, 1); return ok }, time.Second)
		require.Equal(t, msg, buf)
	}
	require.Equal(t, [2]int{1400, 1400}, largest, "largest datagram sent by each side")

	_, err = n.eps[0].ConnectDatagram(n.now, 1, 9001)
	require.Error(t, err)
	_, err = n.eps[0].ConnectDatagram(n.now, 1, 100)
	require.Error(t, err)
}
