package mrtransport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// On loopback, large messages whose receive is posted are read straight
// into the receive buffer, and the bytes arrive exact, both ways at once,
// with nothing written beyond the message. Not every datagram is placed:
// a message's first piece opens it, and a reader that was waiting with a
// whole batch (nothing to place when it began) takes the datagrams queued
// by then into its own buffers (here about a fifth). At least half are
// placed (none would be without placement; the margin is for loaded CI
// machines).
func TestPayloadsReadIntoPlace(t *testing.T) {
	linuxOnly(t, "reading payloads into place (scatter reads)")
	eps := newTestWorld(t, 2, Config{Paths: 4})
	const size, rounds = 8 << 20, 3
	ctx := testCtx(t)
	for round := range rounds {
		tag := benchTag(7, uint32(round))
		bufs := [2][]byte{make([]byte, size+64), make([]byte, size+64)}
		reqs := []transport.Request{
			eps[0].Recv(1, tag, bufs[0]), eps[1].Recv(0, tag, bufs[1]),
			eps[0].Send(1, tag, transporttest.Pattern(size, 10)),
			eps[1].Send(0, tag, transporttest.Pattern(size, 11)),
		}
		for _, r := range reqs {
			n, err := r.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, size, n)
		}
		require.NoError(t, transporttest.Verify(bufs[0][:size], 11))
		require.NoError(t, transporttest.Verify(bufs[1][:size], 10))
		require.Equal(t, make([]byte, 64), bufs[0][size:], "bytes beyond the message were written")
		require.Equal(t, make([]byte, 64), bufs[1][size:], "bytes beyond the message were written")
	}
	for _, ep := range eps {
		st := ep.Stats().Engine
		datagrams := int64(rounds * size / (DefaultLoopbackDatagram - 100))
		require.Greater(t, st.DatagramsPlaced, datagrams/2,
			"placed %d of %d datagrams read", st.DatagramsPlaced, st.DatagramsRead)
	}
}

// A waiter that reads the sockets itself (spin.go), or the drain before a
// silence, must not read a datagram that a reader has peeked at and is
// about to read into place: the reader would then read the next datagram
// into the peeked one's place. Checking the core's Placing before reading
// is not enough, since placing may begin while a waiter reads. Here, at
// the first peek of a payload to place, the receiving engine's readReady
// (what both run) reads its one path socket, which holds the peeked
// datagram at least: it must leave it to the reader. The message then
// arrives exact.
func TestSpinReadLeavesPeekedDatagram(t *testing.T) {
	linuxOnly(t, "reading payloads into place (scatter reads)")
	eps := newTestWorld(t, 2, Config{Paths: 1})
	recv := eps[1].eng
	require.NotNil(t, recv.spin, "no spinner over loopback udpio sockets")
	var calls, batches, ready, skipped int
	hook := func(e *engine, path int) {
		if e != recv || calls > 0 {
			return
		}
		calls++
		e.spin.mu.Lock()
		b, r, sk, _ := e.readReady(e.spin, e.spin.ms)
		e.spin.mu.Unlock()
		batches, skipped = b, sk
		if r {
			ready = 1
		}
	}
	afterPeek.Store(&hook)
	t.Cleanup(func() { afterPeek.Store(nil) })
	const size = 4 << 20
	ctx := testCtx(t)
	buf := make([]byte, size)
	tag := benchTag(8, 0)
	rr := eps[1].Recv(0, tag, buf)
	sr := eps[0].Send(1, tag, transporttest.Pattern(size, 12))
	for _, r := range []transport.Request{sr, rr} {
		n, err := r.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, size, n)
	}
	require.NoError(t, transporttest.Verify(buf, 12))
	require.Equal(t, 1, calls, "no payload was peeked at to be placed")
	require.Zero(t, batches, "readReady read the socket between a reader's peek and its read")
	require.Equal(t, 1, ready, "the peeked datagram's socket was not ready")
	require.Equal(t, 1, skipped, "readReady did not report the socket it left to the reader (the drain yields on it)")
}
