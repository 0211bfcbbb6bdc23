package metaroce

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Whole messages that arrived with no receive posted stay receivable after
// the peer closes the connection, in order for one key, and the
// connection's counters stay readable until Close forgets them; a message
// partly received at the close, and any other receive or send, are refused
// with ErrPeerClosed.
func TestPeerCloseKeepsWholeMessages(t *testing.T) {
	n := newTestNet(t, Config{UnexpectedBytes: 256 << 10})
	a, b := n.connect()
	small, big, second := pattern(10, 1), pattern(100<<10, 2), pattern(3000, 3)
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, small))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 2, big))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 3, nil))
	n.runUntil(func() bool {
		_, ok1 := n.done(0, EventSendDone, 1, 1)
		_, ok2 := n.done(0, EventSendDone, 1, 2)
		_, ok3 := n.done(0, EventSendDone, 1, 3)
		return ok1 && ok2 && ok3
	}, time.Second)
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, second)) // the same key again, once the first is done
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 4, pattern(1<<20, 4)))
	n.runUntil(func() bool {
		k := 0
		for _, ev := range n.events[0] {
			if ev.Kind == EventSendDone && ev.Msg == 1 {
				k++
			}
		}
		return k == 2
	}, time.Second)
	n.runFor(5 * time.Millisecond) // part of 1/4 arrives: beyond the budget, it cannot all
	cs, _, _ := n.eps[1].ConnStats(b, nil)
	require.Greater(t, cs.UnexpectedBytes, int64(len(small)+len(big)+len(second)), "part of the 1 MiB message is held")

	require.NoError(t, n.eps[0].Close(n.now, a))
	n.runUntil(func() bool { return n.has(1, EventClosed) }, time.Second)
	cs, paths, ok := n.eps[1].ConnStats(b, nil)
	require.True(t, ok, "counters of the closed connection")
	require.False(t, cs.Established)
	require.Equal(t, int64(len(small)+len(big)+len(second)), cs.UnexpectedBytes)
	require.Positive(t, cs.BytesArrived)
	require.NotEmpty(t, paths)
	require.Empty(t, n.eps[1].Conns())

	recv := func(msg uint64, size int) (Event, []byte) {
		t.Helper()
		buf := make([]byte, size)
		n.events[1] = nil
		require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, msg, buf))
		ev, ok := n.eps[1].PollEvent()
		require.True(t, ok, "no event for the kept message %d", msg)
		return ev, buf
	}
	for _, m := range []struct {
		msg  uint64
		want []byte
	}{{1, small}, {2, big}, {3, nil}, {1, second}} {
		ev, buf := recv(m.msg, len(m.want)+5)
		require.Equal(t, EventRecvDone, ev.Kind)
		require.NoError(t, ev.Err)
		require.Equal(t, b, ev.Conn)
		require.Equal(t, len(m.want), ev.N, "message %d", m.msg)
		require.True(t, bytes.Equal(m.want, buf[:ev.N]), "message %d differs", m.msg)
	}
	require.ErrorIs(t, n.eps[1].PostRecv(n.now, b, 1, 4, make([]byte, 1<<20)), ErrPeerClosed, "the partly received message")
	require.ErrorIs(t, n.eps[1].PostRecv(n.now, b, 1, 1, make([]byte, 8)), ErrPeerClosed, "a key already taken")
	require.ErrorIs(t, n.eps[1].Send(n.now, b, 1, 9, []byte{1}), ErrPeerClosed)
	cs, _, _ = n.eps[1].ConnStats(b, nil)
	require.Zero(t, cs.UnexpectedBytes)
	require.Equal(t, int64(4), cs.MsgsRecv)

	require.NoError(t, n.eps[1].Close(n.now, b), "Close forgets the ended connection")
	_, ok = n.eps[1].PollEvent()
	require.False(t, ok, "an event after the Close of an ended connection")
	_, _, ok = n.eps[1].ConnStats(b, nil)
	require.False(t, ok)
	require.ErrorIs(t, n.eps[1].PostRecv(n.now, b, 1, 1, nil), ErrUnknownConn)
	require.ErrorIs(t, n.eps[1].Close(n.now, b), ErrUnknownConn)
}

// A kept message longer than the buffer posted for it fails that receive
// with ErrTruncated, and is gone. The side that closed keeps nothing.
func TestPeerCloseKeptTruncated(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.connect()
	require.NoError(t, n.eps[1].Send(n.now, b, 2, 2, pattern(20, 9)))
	require.NoError(t, n.eps[0].Send(n.now, a, 2, 1, pattern(3000, 5)))
	n.runUntil(func() bool {
		_, ok1 := n.done(0, EventSendDone, 2, 1)
		_, ok2 := n.done(1, EventSendDone, 2, 2)
		return ok1 && ok2
	}, time.Second)
	require.NoError(t, n.eps[0].Close(n.now, a))
	n.runUntil(func() bool { return n.has(1, EventClosed) }, time.Second)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 1, make([]byte, 100)))
	ev, ok := n.eps[1].PollEvent()
	require.True(t, ok)
	require.ErrorIs(t, ev.Err, ErrTruncated)
	require.ErrorIs(t, n.eps[1].PostRecv(n.now, b, 2, 1, make([]byte, 3000)), ErrPeerClosed)
	_, _, ok = n.eps[0].ConnStats(a, nil)
	require.False(t, ok, "this side's Close keeps nothing")
	require.ErrorIs(t, n.eps[0].PostRecv(n.now, a, 2, 2, make([]byte, 20)), ErrUnknownConn)
}

// An endpoint keeps at most Config.MaxConns ended connections, forgetting
// the oldest first.
func TestRemnantsAreBounded(t *testing.T) {
	e, err := NewEndpoint(Config{MaxConns: 2})
	require.NoError(t, err)
	var ids []ConnID
	for i := range 3 {
		id, err := e.Connect(0, uint64(i+1))
		require.NoError(t, err)
		c := e.conns[id]
		c.phase = phaseOpen // as if set up
		e.fail(0, c, ErrPeerClosed, false)
		ids = append(ids, id)
	}
	_, _, ok := e.ConnStats(ids[0], nil)
	require.False(t, ok, "the oldest ended connection is forgotten")
	for _, id := range ids[1:] {
		_, _, ok := e.ConnStats(id, nil)
		require.True(t, ok)
	}
	require.Len(t, e.remnants, 2)
}

// TestRemnantBytesBound: the whole messages kept from ended connections
// are bounded over the endpoint by Config.RemnantBytes. Two connections
// each end (the peer closes) holding a 3000-byte unexpected message; with
// room for one, the older connection's message is forgotten (counted in
// RemnantDropped) and its receive fails with the error that ended it,
// while the newer one's is still delivered; then nothing is kept.
func TestRemnantBytesBound(t *testing.T) {
	n := newTestNet(t, Config{RemnantBytes: 4000})
	var pairs [2][2]ConnID // [connection]{sender side, receiver side}
	for i := range pairs {
		a, err := n.eps[0].Connect(n.now, 1)
		require.NoError(t, err)
		var b ConnID
		n.runUntil(func() bool {
			for _, ev := range n.events[1] {
				if ev.Kind == EventAccepted && (i == 0 || ev.Conn != pairs[0][1]) {
					b = ev.Conn
				}
			}
			return b != 0
		}, time.Second)
		pairs[i] = [2]ConnID{a, b}
	}
	for i, p := range pairs {
		require.NoError(t, n.eps[0].Send(n.now, p[0], 1, 1, pattern(3000, byte(i))))
		n.runUntil(func() bool {
			cs, _, _ := n.eps[1].ConnStats(p[1], nil)
			return cs.UnexpectedBytes == 3000
		}, time.Second)
		require.NoError(t, n.eps[0].Close(n.now, p[0]))
		n.runUntil(func() bool {
			_, _, ok := n.eps[1].ConnStats(p[1], nil)
			cs, _, _ := n.eps[1].ConnStats(p[1], nil)
			return ok && !cs.Established
		}, time.Second)
	}
	st := n.eps[1].Stats()
	require.Equal(t, int64(3000), st.RemnantBytes)
	require.Equal(t, int64(3000), st.RemnantDropped)
	old, _, ok := n.eps[1].ConnStats(pairs[0][1], nil)
	require.True(t, ok, "the older connection's counters are kept")
	require.Zero(t, old.UnexpectedBytes)
	require.ErrorIs(t, n.eps[1].PostRecv(n.now, pairs[0][1], 1, 1, make([]byte, 3000)), ErrPeerClosed)
	n.events[1] = nil
	buf := make([]byte, 3000)
	require.NoError(t, n.eps[1].PostRecv(n.now, pairs[1][1], 1, 1, buf))
	ev, ok := n.eps[1].PollEvent()
	require.True(t, ok)
	require.Equal(t, EventRecvDone, ev.Kind)
	require.NoError(t, ev.Err)
	require.Equal(t, pattern(3000, 1), buf)
	require.Zero(t, n.eps[1].Stats().RemnantBytes)
}

// TestRemnantBytesConfig: the default is the larger of 64 MiB and
// UnexpectedBytes, negative keeps nothing, and too large is refused.
func TestRemnantBytesConfig(t *testing.T) {
	c, err := Config{NodeID: 1}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, int64(64<<20), c.RemnantBytes)
	c, err = Config{NodeID: 1, UnexpectedBytes: 1 << 30}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), c.RemnantBytes)
	c, err = Config{NodeID: 1, RemnantBytes: -1}.withDefaults()
	require.NoError(t, err)
	require.Zero(t, c.RemnantBytes)
	_, err = Config{NodeID: 1, RemnantBytes: 1<<40 + 1}.withDefaults()
	require.ErrorIs(t, err, ErrConfig)
}
