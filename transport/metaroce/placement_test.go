package metaroce

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// transferPlaced moves one message of size bytes with payloads read into
// place, under a drop function, and returns the received bytes.
func transferPlaced(t *testing.T, cfg Config, size int, drop func(from, path int, b []byte) bool) (*testNet, []byte, []byte) {
	n := newTestNet(t, cfg)
	n.place, n.drop = true, drop
	a, b := n.connect()
	msg := pattern(size, 9)
	buf := make([]byte, size+100)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, msg))
	n.runUntil(func() bool {
		_, ok := n.done(1, EventRecvDone, 1, 1)
		return ok
	}, 10*time.Second)
	return n, msg, buf
}

// A driver that reads payloads into place gets every piece but the first
// of a matched message read straight into the posted buffer, and the
// message exact; the posted buffer beyond the message is untouched.
func TestPlacementReadsIntoPlace(t *testing.T) {
	const size = 200_000
	n, msg, buf := transferPlaced(t, Config{MaxDatagram: 9000}, size, nil)
	require.Equal(t, msg, buf[:size])
	require.Equal(t, make([]byte, 100), buf[size:])
	pieces := (size + 9000 - wire.DataOverhead - 1) / (9000 - wire.DataOverhead)
	require.Equal(t, pieces-1, n.placed, "every piece after the first opened the message")
	require.Zero(t, n.eps[1].Stats().DropChecksum)
}

// Damaged datagrams read into place are caught by the CRC and their bytes
// overwritten by the resent piece; duplicates are not placed twice and
// lost pieces come again: the message arrives exact.
func TestPlacementSurvivesDamage(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		damaged := 0
		drop := func(_, _ int, b []byte) bool {
			switch r := rng.Float64(); {
			case r < 0.05:
				return true
			case r < 0.15 && len(b) > wire.DataHeadLen+1:
				b[wire.DataHeadLen+rng.IntN(len(b)-wire.DataHeadLen)] ^= 0x40
				damaged++
			case r < 0.18 && len(b) > 8:
				b[rng.IntN(min(len(b), wire.DataHeadLen))] ^= 0x01 // a damaged head misleads Placement
				damaged++
			}
			return false
		}
		n, msg, buf := transferPlaced(t, Config{MaxDatagram: 4000}, 300_000, drop)
		require.Equal(t, msg, buf[:len(msg)], "seed %d", seed)
		require.Equal(t, make([]byte, 100), buf[len(msg):], "seed %d", seed)
		require.Positive(t, n.placed, "seed %d", seed)
		require.Positive(t, damaged, "seed %d", seed)
		require.Positive(t, n.eps[1].Stats().DropChecksum, "seed %d", seed)
	}
}

// Placement declines what is not a missing piece of a matched message.
func TestPlacementDeclines(t *testing.T) {
	n := newTestNet(t, Config{MaxDatagram: 4000})
	_, _ = n.connect()
	ep := n.eps[1]
	require.Nil(t, ep.Placement(0, nil))
	require.Nil(t, ep.Placement(-1, make([]byte, wire.DataHeadLen)))
	require.Nil(t, ep.Placement(99, make([]byte, wire.DataHeadLen)))
	// A well-formed head of an unknown connection.
	d := wire.Data{Conn: 12345, Flags: wire.FlagFirst, Total: 5000, Payload: make([]byte, 100)}
	pkt := wire.AppendData(nil, &d)
	require.Nil(t, ep.Placement(0, pkt[:wire.DataHeadLen]))
	// Garbage.
	require.Nil(t, ep.Placement(0, make([]byte, wire.DataHeadLen)))
}

// Placing is true exactly while a matched message misses pieces or a
// receive posted for a message of several pieces waits.
func TestPlacing(t *testing.T) {
	n := newTestNet(t, Config{MaxDatagram: 4000})
	n.place = true
	a, b := n.connect()
	require.False(t, n.eps[1].Placing())
	small := make([]byte, 100)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 2, small))
	require.False(t, n.eps[1].Placing(), "a one-piece receive never has a place")
	require.True(t, n.eps[1].CancelRecv(n.now, b, 1, 2))
	buf := make([]byte, 20_000)
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 3, buf))
	require.True(t, n.eps[1].Placing(), "a receive for several pieces waits")
	require.True(t, n.eps[1].CancelRecv(n.now, b, 1, 3))
	require.False(t, n.eps[1].Placing(), "the receive was withdrawn")
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 1, 1, buf))
	require.NoError(t, n.eps[0].Send(n.now, a, 1, 1, pattern(len(buf), 3)))
	n.flush()
	// Deliver the datagrams in flight one by one until the first piece
	// is in (the message is then open and matched).
	for i := 0; i < 5 && n.placed == 0; i++ {
		require.NotEmpty(t, n.flights)
		f := n.flights[0]
		n.flights = n.flights[1:]
		n.now = max(n.now, f.at)
		n.deliver(n.eps[f.to], f)
	}
	require.True(t, n.eps[1].Placing(), "the message has begun and misses pieces")
	require.Positive(t, n.placed)
	n.runUntil(func() bool {
		_, ok := n.done(1, EventRecvDone, 1, 1)
		return ok
	}, time.Second)
	require.False(t, n.eps[1].Placing())
	require.Equal(t, pattern(len(buf), 3), buf)
}
