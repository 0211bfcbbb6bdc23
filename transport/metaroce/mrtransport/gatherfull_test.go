package mrtransport

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// TestFullPiecesGatheredAt9000 checks that at MTU 9000 (datagrams of 8972
// bytes, below the udpio socket's gatherMin) the engine gathers a full
// piece's payload instead of copying it into the datagram buffer, and
// still copies a payload short enough to carry a piggybacked ACK; and
// that an AllReduce over it is exact.
func TestFullPiecesGatheredAt9000(t *testing.T) {
	ctx := testCtx(t)
	const datagram, paths = 8972, 4
	eps, err := NewLocalWorld(ctx, 2, Config{Paths: paths, MaxDatagram: datagram})
	require.NoError(t, err)
	defer func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	}()
	g := eps[0].eng.gatherMin
	full := datagram - wire.DataOverhead
	require.Positive(t, g)
	require.LessOrEqual(t, g, full, "a full piece's payload is gathered")
	// The largest payload on which the core can piggyback an ACK is copied.
	ackFits := datagram - wire.DataOverhead + wire.HeaderLen + wire.CRCLen - wire.AckLen(paths, 0)
	require.Greater(t, g, ackFits)
	allReduceSum(t, newComms(t, eps), 1<<20)
}

// TestGatheredDatagramsJoinTrains writes two gathered datagrams of equal
// size to one address through a udpio path socket: they go as one GSO
// train (read back on loopback, with GRO, as one message of two segments)
// with their bytes in order; a gathered datagram alone goes as itself.
func TestGatheredDatagramsJoinTrains(t *testing.T) {
	lo := netip.MustParseAddrPort("127.0.0.1:0")
	tx, err := OpenUDPIO(lo, udpio.Config{})
	require.NoError(t, err)
	defer tx.Close()
	rx, err := OpenUDPIO(lo, udpio.Config{})
	require.NoError(t, err)
	defer rx.Close()
	u := tx.(*udpioSocket)
	if !u.s.Caps().GSO || !rx.(*udpioSocket).s.Caps().GRO {
		t.Skip("no GSO or GRO on this system")
	}
	to := rx.LocalAddr()
	dgram := func(fill byte) Message {
		head := bytes.Repeat([]byte{fill}, 64)
		m := Message{Buf: head, N: len(head), Addr: to}
		m.gather = [2][]byte{bytes.Repeat([]byte{fill + 1}, 8000), []byte{fill + 2, fill + 2, fill + 2, fill + 2}}
		return m
	}
	want := func(ms ...Message) []byte {
		var b []byte
		for _, m := range ms {
			b = append(b, m.Buf[:m.N]...)
			b = append(b, m.gather[0]...)
			b = append(b, m.gather[1]...)
		}
		return b
	}
	read := func() Message {
		require.NoError(t, rx.(*udpioSocket).s.SetReadDeadline(time.Now().Add(5*time.Second)))
		ms := []Message{{Buf: make([]byte, ReadBufferSize)}}
		n, err := rx.ReadBatch(ms)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return ms[0]
	}

	a, b := dgram(10), dgram(20)
	n, err := tx.WriteBatch([]Message{a, b})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	got := read()
	require.Equal(t, len(want(a)), got.Segment, "one train of two datagrams")
	require.Equal(t, want(a, b), got.Buf[:got.N])

	c := dgram(30)
	n, err = tx.WriteBatch([]Message{c})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got = read()
	require.Equal(t, want(c), got.Buf[:got.N])
}
