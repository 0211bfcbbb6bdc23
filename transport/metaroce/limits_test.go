package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]Config{
		"paths 0 ok means default": {},
		"257 paths":                {Paths: 257},
		"tiny datagram":            {MaxDatagram: 100},
		"huge datagram":            {MaxDatagram: 70000},
		"negative budget":          {UnexpectedBytes: -1},
		"budget max below budget":  {UnexpectedBytes: 8 << 20, UnexpectedMax: 4 << 20},
		"budget max too large":     {UnexpectedMax: 1<<34 + 1},
		"msg window below 16":      {MsgWindow: 3},
		"min rto above max":        {MinRTO: time.Second, MaxRTO: time.Millisecond},
		"negative idle":            {IdleTimeout: -time.Second},
		"ack every 65":             {AckEvery: 65},
	} {
		_, err := NewEndpoint(cfg)
		if name == "paths 0 ok means default" {
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, ErrConfig, name)
	}
	ep, err := NewEndpoint(Config{})
	require.NoError(t, err)
	got := ep.Config()
	require.Equal(t, 4, got.Paths)
	require.Equal(t, 1452, got.MaxDatagram)
	require.Equal(t, int64(4<<20), got.UnexpectedBytes)
	require.Equal(t, int64(64<<20), got.UnexpectedMax)
	require.Equal(t, 10*time.Second, got.IdleTimeout)
}

func TestIdleConnectionStaysUpWithKeepalives(t *testing.T) {
	n := newTestNet(t, Config{IdleTimeout: 10 * time.Millisecond})
	a, b := n.connect()
	n.runFor(100 * time.Millisecond)
	require.False(t, n.has(0, EventClosed) || n.has(1, EventClosed), "an idle but healthy connection timed out")
	require.Equal(t, []ConnID{a}, n.eps[0].Conns())
	require.Equal(t, []ConnID{b}, n.eps[1].Conns())
}

func TestSendAndRecvErrors(t *testing.T) {
	n := newTestNet(t, Config{MaxSends: 2, MaxRecvs: 1})
	a, b := n.connect()
	ep0, ep1 := n.eps[0], n.eps[1]
	require.ErrorIs(t, ep0.Send(n.now, 999, 1, 1, nil), ErrUnknownConn)
	require.NoError(t, ep0.Send(n.now, a, 1, 1, nil))
	require.ErrorIs(t, ep0.Send(n.now, a, 1, 1, nil), ErrDuplicate)
	require.NoError(t, ep0.Send(n.now, a, 1, 2, nil))
	require.ErrorIs(t, ep0.Send(n.now, a, 1, 3, nil), ErrLimit)
	require.NoError(t, ep1.PostRecv(n.now, b, 5, 5, nil))
	require.ErrorIs(t, ep1.PostRecv(n.now, b, 5, 5, nil), ErrDuplicate)
	require.ErrorIs(t, ep1.PostRecv(n.now, b, 5, 6, nil), ErrLimit)
	require.True(t, ep1.CancelRecv(n.now, b, 5, 5))
	require.False(t, ep1.CancelRecv(n.now, b, 5, 5))
	require.True(t, ep0.CancelSend(n.now, a, 1, 2))
	require.False(t, ep0.CancelSend(n.now, a, 1, 2))
	require.ErrorIs(t, ep0.Close(n.now, 999), ErrUnknownConn)
}

// A receiver that never posts stalls its sender after MsgWindow messages,
// and nothing beyond the budget is held meanwhile; posting releases them.
func TestMessageWindowBoundsUnfinishedMessages(t *testing.T) {
	n := newTestNet(t, Config{MsgWindow: 16, UnexpectedBytes: 1 << 20})
	a, b := n.connect()
	const msgs = 40
	for i := range msgs {
		require.NoError(t, n.eps[0].Send(n.now, a, 1, uint64(i), pattern(100, byte(i))))
	}
	n.runFor(5 * time.Millisecond)
	sent := 0
	for i := range msgs {
		if _, ok := n.done(0, EventSendDone, 1, uint64(i)); ok {
			sent++
		}
	}
	require.Equal(t, 16, sent, "exactly the window's worth left the sender")
	bufs := make([][]byte, msgs)
	for i := range msgs {
		bufs[i] = make([]byte, 100)
		require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, uint64(i), bufs[i]))
	}
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, msgs-1); return ok }, time.Second)
	for i := range msgs {
		require.Equal(t, pattern(100, byte(i)), bufs[i])
	}
}

// The ACK that tells a window-blocked sender that the receiver finished a
// message (here: a held unexpected message completed by PostRecv, with no
// packet from the sender to answer) may be lost. The sender must ask
// again with a probe instead of waiting for a keepalive.
func TestLostWindowUpdateIsRecovered(t *testing.T) {
	n := newTestNet(t, Config{MsgWindow: 16, IdleTimeout: 10 * time.Second})
	a, b := n.connect()
	for i := range 17 {
		require.NoError(t, n.eps[0].Send(n.now, a, 1, uint64(i), pattern(10, byte(i))))
	}
	n.runFor(time.Millisecond) // 16 messages arrive unexpected and fill the window
	dropAcks := true
	n.drop = func(from, path int, b []byte) bool {
		return from == 1 && dropAcks && b[1] == byte(wire.TypeAck)
	}
	for i := range 16 {
		require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, uint64(i), make([]byte, 10)))
	}
	n.runFor(100 * time.Microsecond) // the window updates are lost
	dropAcks = false
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 16, make([]byte, 10)))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 16); return ok }, 20*time.Millisecond)
}
