package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// A receiver that closes right after its receive completed, while its ACK
// of the message is lost, still lets the sender's send complete: Close
// sends a final ACK before the CLOSE. The later message, never received,
// fails with ErrPeerClosed.
func TestCloseSendsFinalAck(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	dropAcks := true
	n.drop = func(from, _ int, data []byte) bool {
		h, _, err := wire.Open(data)
		return err == nil && from == 1 && h.Type == wire.TypeAck && dropAcks
	}
	msg := pattern(3000, 1)
	buf := make([]byte, len(msg))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, msg))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, time.Second)
	_, sent := n.done(0, EventSendDone, 1, 1)
	require.False(t, sent, "the send completed although every ACK was dropped")
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, pattern(10, 2)))

	dropAcks = false
	require.NoError(t, n.eps[1].Close(n.now, b))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	ev, ok := n.done(0, EventSendDone, 1, 1)
	require.True(t, ok)
	require.NoError(t, ev.Err, "the received message's send failed on close")
	ev, ok = n.done(0, EventSendDone, 1, 2)
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrPeerClosed)
}
