package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

func TestHandshakeAndOneMessage(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	msg := pattern(100_000, 1)
	buf := make([]byte, len(msg))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 2, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, msg))
	n.runUntil(func() bool {
		_, r := n.done(1, EventRecvDone, 1, 2)
		_, s := n.done(0, EventSendDone, 1, 2)
		return r && s
	}, time.Second)
	ev, _ := n.done(1, EventRecvDone, 1, 2)
	require.NoError(t, ev.Err)
	require.Equal(t, len(msg), ev.N)
	require.Equal(t, msg, buf)
}

func TestZeroByteMessage(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	require.NoError(t, n.eps[0].Send(n.now, a, 0, 0, nil))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 0, 0, nil))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 0, 0); return ok }, time.Second)
	ev, _ := n.done(1, EventRecvDone, 0, 0)
	require.NoError(t, ev.Err)
	require.Zero(t, ev.N)
	n.runUntil(func() bool { _, ok := n.done(0, EventSendDone, 0, 0); return ok }, time.Second)
}

func TestUnexpectedMessageIsHeldThenPlaced(t *testing.T) {
	n := newTestNet(t, Config{UnexpectedBytes: 64 << 10})
	a, b := n.connect()
	msg := pattern(1<<20, 3)
	require.NoError(t, n.eps[0].Send(n.now, a, 5, 6, msg))
	n.runFor(5 * time.Millisecond)
	cs, _, _ := n.eps[1].ConnStats(b, nil)
	require.LessOrEqual(t, cs.UnexpectedBytes, int64(64<<10), "held beyond the budget")
	require.Positive(t, cs.UnexpectedBytes, "nothing was sent eagerly")
	_, sent := n.done(0, EventSendDone, 5, 6)
	require.False(t, sent, "a 1 MiB message finished into a 64 KiB budget")

	buf := make([]byte, len(msg))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 5, 6, buf))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 5, 6); return ok }, time.Second)
	require.Equal(t, msg, buf)
	cs, _, _ = n.eps[1].ConnStats(b, nil)
	require.Zero(t, cs.UnexpectedBytes)
}

// A message whose receive is never posted must not stop a later one whose
// receive is: the budget is full, so the later one is announced and
// granted.
func TestFullBudgetDoesNotBlockPostedMessage(t *testing.T) {
	n := newTestNet(t, Config{UnexpectedBytes: 16 << 10})
	a, b := n.connect()
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(1<<20, 1)))
	n.runFor(time.Millisecond)
	want := pattern(300_000, 2)
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, want))
	buf := make([]byte, len(want))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 2, buf))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 2); return ok }, time.Second)
	require.Equal(t, want, buf)
}

func TestTruncatedReceiveFails(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, 10)))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(5000, 1)))
	n.runUntil(func() bool { _, ok := n.done(0, EventSendDone, 1, 1); return ok }, time.Second)
	ev, ok := n.done(1, EventRecvDone, 1, 1)
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrTruncated)
}

func TestCancelledSendFailsTheReceive(t *testing.T) {
	n := newTestNet(t, Config{UnexpectedBytes: 8 << 10})
	a, b := n.connect()
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(1<<20, 1)))
	n.runFor(200 * time.Microsecond)
	require.True(t, n.eps[0].CancelSend(n.now, a, 1, 1))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, 1<<20)))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, time.Second)
	ev, _ := n.done(1, EventRecvDone, 1, 1)
	require.ErrorIs(t, ev.Err, ErrRemoteCancelled)
	_, sent := n.done(0, EventSendDone, 1, 1)
	require.False(t, sent)
	// The budget is whole again: a new unexpected message may use all of it.
	n.runFor(time.Millisecond)
	cs, _, _ := n.eps[0].ConnStats(a, nil)
	require.Equal(t, int64(8<<10), cs.Credit)
}

func TestManyStreamsUnderLoss(t *testing.T) {
	n := newTestNet(t, Config{Paths: 4})
	drops := 0
	n.drop = func(from, path int, b []byte) bool {
		drops++
		return drops%7 == 0
	}
	a, b := n.connect()
	const msgs = 40
	bufs := make([][]byte, msgs)
	for i := range msgs {
		size := (i * 7919) % 70000
		bufs[i] = make([]byte, size)
		require.NoError(t, n.eps[1].PostRecv(n.now, b, uint64(i%5), uint64(i), bufs[i]))
		require.NoError(t, n.eps[0].Send(n.now, a, uint64(i%5), uint64(i), pattern(size, byte(i))))
	}
	n.runUntil(func() bool {
		for i := range msgs {
			if _, ok := n.done(1, EventRecvDone, uint64(i%5), uint64(i)); !ok {
				return false
			}
		}
		return true
	}, 5*time.Second)
	for i := range msgs {
		require.Equal(t, pattern(len(bufs[i]), byte(i)), bufs[i], "message %d", i)
	}
}

func TestSilentPeerTimesOut(t *testing.T) {
	n := newTestNet(t, Config{IdleTimeout: 50 * time.Millisecond})
	a, _ := n.connect()
	n.drop = func(int, int, []byte) bool { return true }
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(1000, 1)))
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	ev, ok := n.done(0, EventSendDone, 1, 1)
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrIdleTimeout)
}

func TestConnectToNobodyTimesOut(t *testing.T) {
	n := newTestNet(t, Config{IdleTimeout: 20 * time.Millisecond})
	n.drop = func(int, int, []byte) bool { return true }
	_, err := n.eps[0].Connect(n.now, 1)
	require.NoError(t, err)
	n.runUntil(func() bool { return n.has(0, EventClosed) }, time.Second)
	require.ErrorIs(t, n.events[0][0].Err, ErrIdleTimeout)
}

func TestCloseTellsPeer(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, 10)))
	require.NoError(t, n.eps[0].Close(n.now, a))
	n.runUntil(func() bool { return n.has(1, EventClosed) }, time.Second)
	ev, _ := n.done(1, EventRecvDone, 1, 1)
	require.ErrorIs(t, ev.Err, ErrPeerClosed)
	require.Empty(t, n.eps[1].Conns())
}

func TestBadDatagramsAreCounted(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	ep := n.eps[1]
	// A valid DATA packet from the peer, captured on its way.
	var good []byte
	n.drop = func(from, path int, pkt []byte) bool {
		if from == 0 && good == nil && len(pkt) > wire.DataOverhead {
			good = append([]byte(nil), pkt...)
		}
		return false
	}
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, 100)))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(100, 1)))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, time.Second)
	require.NotNil(t, good)

	ep.HandleDatagram(n.now, 0, false, []byte{1, 2, 3})
	ep.HandleDatagram(n.now, 0, false, make([]byte, 40))
	flipped := append([]byte(nil), good...)
	flipped[30] ^= 4
	ep.HandleDatagram(n.now, 0, false, flipped)
	stranger := wire.AppendProbe(nil, &wire.Probe{Conn: 12345})
	ep.HandleDatagram(n.now, 0, false, stranger)
	ep.HandleDatagram(n.now, 9, false, good)              // no such socket
	ep.HandleDatagram(n.now, 1-int(good[3]), false, good) // arrived on the wrong path
	ep.HandleDatagram(n.now, 0, false, make([]byte, ep.Config().MaxDatagram+1))
	st := ep.Stats()
	require.Equal(t, int64(1), st.DropShort)
	require.Equal(t, int64(1), st.DropVersion)
	require.Equal(t, int64(1), st.DropChecksum)
	require.Equal(t, int64(1), st.DropUnknownConn)
	require.Equal(t, int64(2), st.DropBadPath)
	require.Equal(t, int64(1), st.DropTooLarge)
	n.runFor(time.Millisecond)
	ev, _ := n.done(1, EventRecvDone, 1, 1)
	require.NoError(t, ev.Err, "the replayed packet changed nothing")

	short := make([]byte, 100)
	_, ok := n.eps[0].PollTransmit(n.now, short)
	require.False(t, ok, "a buffer shorter than MaxDatagram is refused")
}

// A forged empty piece at the very end of a message must not count as one
// of its pieces: the message completes only with all of its bytes.
func TestEmptyPieceAtTheEndIsRejected(t *testing.T) {
	n := newTestNet(t, Config{Paths: 1})
	a, b := n.connect()
	chunk := uint64(n.eps[1].Config().MaxDatagram - wire.DataOverhead)
	buf := make([]byte, 2*chunk)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	peerConn := n.eps[0].conns[a].peerConn
	// Piece 0 arrives, as if from the peer, with path sequence 0.
	want := pattern(int(2*chunk), 5)
	for seq, d := range []wire.Data{
		{Flags: wire.FlagFirst, Offset: 0, Payload: want[:chunk]},
		{Flags: wire.FlagLast, Offset: 2 * chunk},
	} {
		d.Conn, d.Seq, d.Stream, d.Msg, d.Total = peerConn, uint64(seq), 1, 1, 2*chunk
		d.Flags |= wire.FlagUnconfirmed
		n.eps[1].HandleDatagram(n.now, 0, false, wire.AppendData(nil, &d))
	}
	n.flush()
	_, done := n.done(1, EventRecvDone, 1, 1)
	require.False(t, done, "completed without its second chunk")
	cs, _, _ := n.eps[1].ConnStats(b, nil)
	require.Equal(t, int64(1), cs.Discarded)
}

func TestHandshakeSeedsPathRTT(t *testing.T) {
	n := newTestNet(t, Config{Paths: 2})
	n.delay = 50 * time.Microsecond
	a, b := n.connect()
	n.runFor(time.Millisecond) // the acceptor times the HELLO-ACK to the confirming ACK
	for i, c := range []*conn{n.eps[0].conns[a], n.eps[1].conns[b]} {
		for _, p := range c.paths {
			require.Equal(t, 100*time.Microsecond, p.rtt.srtt, "endpoint %d path %d", i, p.idx)
		}
	}
}
