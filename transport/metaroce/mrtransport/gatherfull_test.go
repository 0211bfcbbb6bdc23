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
// piece's payload instead of copying it into the datagram buffer, with
// and without AckRoom's shorter pieces (at 1 path, where the gather
// threshold of sessions 21 and before, no room for an ACK of every path,
// lay above AckRoom's full piece); and that an AllReduce over it is exact.
func TestFullPiecesGatheredAt9000(t *testing.T) {
	const datagram = 8972
	for _, paths := range []int{1, 4} {
		for _, noRoom := range []bool{false, true} {
			ctx := testCtx(t)
			eps, err := NewLocalWorld(ctx, 2, Config{Paths: paths, MaxDatagram: datagram, AckRoom: !noRoom})
			require.NoError(t, err)
			g := eps[0].eng.gatherMin
			full := datagram - wire.DataOverhead
			if !noRoom {
				full -= wire.AckRoomLen
			}
			require.Positive(t, g)
			require.LessOrEqual(t, g, full, "a full piece's payload is gathered (paths %d, no room %v)", paths, noRoom)
			require.Greater(t, g, full-wire.TrailerLen-1, "paths %d, no room %v", paths, noRoom)
			allReduceSum(t, newComms(t, eps), 1<<20)
			for _, ep := range eps {
				require.NoError(t, ep.Close())
			}
		}
	}
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

// TestTrainsGatherWithoutCopy checks how a udpio path socket packs a batch
// into GSO trains: gathered full pieces to one address make one train whose
// slices are the datagrams' own (headers, payloads and tails where they
// lie: nothing is copied together), up to a GSO send's bytes; a datagram
// to another address, or of another class, starts a new run; a shorter
// datagram joins a run and ends it; small datagrams join as one slice each.
func TestTrainsGatherWithoutCopy(t *testing.T) {
	lo := netip.MustParseAddrPort("127.0.0.1:0")
	s, err := OpenUDPIO(lo, udpio.Config{})
	require.NoError(t, err)
	defer s.Close()
	u := s.(*udpioSocket)
	a, b := netip.MustParseAddrPort("127.0.0.1:1001"), netip.MustParseAddrPort("127.0.0.1:1002")
	msg := make([]byte, 10*8896)
	full := func(i int, to netip.AddrPort) udpio.Message {
		return udpio.Message{Buf: make([]byte, 72), Gather: [][]byte{msg[i*8896 : (i+1)*8896], make([]byte, 4)}, Addr: to}
	}
	var wr []udpio.Message
	for i := range 9 { // 7 fit in one GSO send (MaxPayload), then 2 more
		wr = append(wr, full(i, a))
	}
	wr = append(wr, full(9, b))
	for range 3 {
		wr = append(wr, udpio.Message{Buf: make([]byte, 200), Addr: b})
	}
	wr = append(wr, udpio.Message{Buf: make([]byte, 100), Addr: b}) // shorter: ends the run
	wr = append(wr, udpio.Message{Buf: make([]byte, 200), Addr: b, Class: 46})
	trains := u.trains(wr)
	require.Len(t, trains, 5)
	require.Equal(t, 8972, trains[0].Segment)
	require.Equal(t, 7, trains[0].Segments())
	require.Len(t, trains[0].Gather, 2+3*6)
	for k := range 7 {
		var payload []byte
		if k == 0 {
			payload = trains[0].Gather[0]
		} else {
			require.Same(t, &wr[k].Buf[0], &trains[0].Gather[3*k-1][0], "datagram %d's header", k)
			payload = trains[0].Gather[3*k]
		}
		require.Same(t, &msg[k*8896], &payload[0], "datagram %d's payload is the message's", k)
	}
	require.Same(t, &wr[0].Buf[0], &trains[0].Buf[0])
	require.Equal(t, 2, trains[1].Segments(), "the rest to a")
	require.Equal(t, b, trains[2].Addr)
	require.Equal(t, 2, trains[2].Segments(), "a full piece to b, and a shorter datagram that ends its run")
	require.Equal(t, 8972, trains[2].Segment)
	require.Equal(t, 200, trains[3].Segment)
	require.Equal(t, 3, trains[3].Segments(), "two small datagrams and a shorter one that ends the run")
	require.Equal(t, uint8(46), trains[4].Class)
	require.Equal(t, 1, trains[4].Segments())
}
