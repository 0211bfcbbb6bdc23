package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// PollTransmitVec leaves payloads of at least minGather bytes out of the
// buffer; the parts joined make the datagrams that deliver the message,
// and smaller payloads are copied as by PollTransmit.
func TestPollTransmitVecGathers(t *testing.T) {
	n := newTestNet(t, Config{MaxDatagram: 1452})
	n.gather = 1000
	a, b := n.connect()
	msg := pattern(100_000, 4)
	buf := make([]byte, len(msg))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, msg))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, msg[:999]))
	small := make([]byte, 999)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 2, small))
	n.runUntil(func() bool {
		_, s1 := n.done(0, EventSendDone, 1, 1)
		_, s2 := n.done(0, EventSendDone, 1, 2)
		return s1 && s2
	}, time.Second)
	require.Equal(t, msg, buf)
	require.Equal(t, msg[:999], small)
	chunk := 1452 - wire.DataOverhead
	// Every full piece of the large message is gathered; its last piece
	// (928 bytes) and the 999-byte message are copied.
	require.Equal(t, len(msg)/chunk, n.gathered)
	require.Zero(t, n.eps[1].Stats().DropChecksum)
}

// Posting the receive of a small message that is already held completes
// it without sending anything: no grant is owed (the message is whole) and
// the sender is far from short of credit.
func TestPostRecvOfHeldMessageSendsNoAck(t *testing.T) {
	n := newTestNet(t, Config{DelaySmallAcks: true})
	a, b := n.connect()
	require.NoError(t, n.eps[0].Send(n.now, a, 3, 4, pattern(100, 5)))
	n.runFor(time.Millisecond)
	cs, _, _ := n.eps[1].ConnStats(b, nil)
	require.Equal(t, int64(100), cs.UnexpectedBytes, "the message is not held")

	buf := make([]byte, 100)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 3, 4, buf))
	_, ok := n.eps[1].PollTransmit(n.now, n.buf)
	require.False(t, ok, "posting the receive of a held message sent a datagram")
	ev, ok := n.eps[1].PollEvent()
	require.True(t, ok)
	require.Equal(t, EventRecvDone, ev.Kind)
	require.Equal(t, pattern(100, 5), buf)
}

// With PiggybackAcks, a reply sent before the ACK of the request is due
// carries that ACK: the request's send completes on the reply, and the
// replier sends no ACK datagram of its own.
func TestAckRidesOnReply(t *testing.T) {
	n := newTestNet(t, Config{DelaySmallAcks: true, PiggybackAcks: true, AckDelay: time.Millisecond})
	a, b := n.connect()
	acksFromB := 0
	n.drop = func(from, _ int, data []byte) bool {
		if h, _, err := wire.Open(data); err == nil && from == 1 && h.Type == wire.TypeAck {
			acksFromB++
		}
		return false
	}
	req, reply := make([]byte, 10), make([]byte, 20)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, req))
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 2, reply))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(10, 1)))
	n.runUntil(func() bool { _, ok := n.done(1, EventRecvDone, 1, 1); return ok }, time.Second)
	start := n.now
	require.NoError(t, n.eps[1].Send(n.now, b, 1, 2, pattern(20, 2)))
	n.runUntil(func() bool { _, ok := n.done(0, EventSendDone, 1, 1); return ok }, time.Second)
	require.Less(t, n.now-start, time.Millisecond, "the request's send waited for the delayed ACK")
	require.Zero(t, acksFromB, "the replier sent an ACK datagram")
	cs, _, _ := n.eps[1].ConnStats(b, nil)
	require.Equal(t, int64(1), cs.AcksPiggybacked)
	require.Equal(t, pattern(10, 1), req)
}

// Transmit.Control marks every datagram but DATA: HELLO, HELLO-ACK, ACK,
// probes and CLOSE, over a transfer with losses (so that NACKs, probes and
// resends happen) and a close; DATA carrying a piggybacked ACK (replies
// both ways, PiggybackAcks) is not control.
func TestTransmitControl(t *testing.T) {
	n := newTestNet(t, Config{MaxDatagram: 1452, PiggybackAcks: true})
	n.classes = make(map[classKey]int)
	k := 0
	n.drop = func(from, path int, b []byte) bool { k++; return k%17 == 0 }
	a, b := n.connect()
	msg := pattern(200_000, 7)
	bufs := [2][]byte{make([]byte, len(msg)), make([]byte, len(msg))}
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, bufs[1]))
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 2, bufs[0]))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, msg))
	require.NoError(t, n.eps[1].Send(n.now, b, 1, 2, msg))
	n.runUntil(func() bool {
		_, s1 := n.done(0, EventSendDone, 1, 1)
		_, s2 := n.done(1, EventSendDone, 1, 2)
		return s1 && s2
	}, 10*time.Second)
	require.Equal(t, msg, bufs[0])
	require.Equal(t, msg, bufs[1])
	for key, count := range n.classes {
		require.Equal(t, key.typ != wire.TypeData, key.control, "%d datagrams of type %v", count, key.typ)
	}
	for _, typ := range []wire.Type{wire.TypeHello, wire.TypeHelloAck, wire.TypeData, wire.TypeAck} {
		require.Positive(t, n.classes[classKey{typ, typ != wire.TypeData}], "no datagram of type %v", typ)
	}
}
