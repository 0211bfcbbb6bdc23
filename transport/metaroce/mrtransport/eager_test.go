package mrtransport

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// An eager send completes within Send, before its peer has posted the
// receive, and the message arrives intact although the caller reuses its
// buffer at once; a send longer than EagerBytes does not complete before
// its ACK.
func TestEagerSendCompletesAtOnce(t *testing.T) {
	eps := newTestWorld(t, 2, Config{EagerBytes: 1000})
	ctx := testCtx(t)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 5, Op: 1}}
	buf := transporttest.Pattern(1000, 7)
	s := eps[0].Send(1, tag, buf)
	select {
	case <-s.Done():
	default:
		t.Fatal("a 1000-byte send with EagerBytes 1000 did not complete within Send")
	}
	n, err := s.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, 1000, n)
	clear(buf)

	got := make([]byte, 1000)
	n, err = eps[1].Recv(0, tag, got).Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, 1000, n)
	require.NoError(t, transporttest.Verify(got, 7))

	// Rank 1's engine is held meanwhile, so that no ACK of the message
	// can complete the send before the check, however late it runs.
	eps[1].eng.lock()
	big := eps[0].Send(1, transport.Tag{OpKey: tag.OpKey, Seq: 1}, make([]byte, 1001))
	select {
	case <-big.Done():
		eps[1].eng.unlock()
		t.Fatal("a 1001-byte send with EagerBytes 1000 completed within Send")
	default:
	}
	eps[1].eng.unlock()
	_, err = eps[1].Recv(0, transport.Tag{OpKey: tag.OpKey, Seq: 1}, make([]byte, 1001)).Wait(ctx)
	require.NoError(t, err)
	_, err = big.Wait(ctx)
	require.NoError(t, err)
}

// lingerComm is the communicator of the message whose first datagram
// dropFirstData loses.
const lingerComm = 0x11ce

// dropFirstData opens UDP sockets that lose the first DATA datagram of
// communicator lingerComm, so that it arrives only when resent.
func dropFirstData(dropped *atomic.Bool) SocketOpener {
	return func(path int, addr netip.AddrPort) (PathSocket, error) {
		s, err := OpenUDP(addr, DefaultSocketBuffer)
		return &dataDropper{PathSocket: s, dropped: dropped}, err
	}
}

type dataDropper struct {
	PathSocket
	dropped *atomic.Bool
}

func (s *dataDropper) WriteBatch(ms []Message) (int, error) {
	for i, m := range ms {
		var d wire.Data
		if wire.ParseData(m.Buf[:m.N], &d) == nil && d.Stream == lingerComm && s.dropped.CompareAndSwap(false, true) {
			n, err := s.PathSocket.WriteBatch(ms[:i])
			if err != nil || n < i {
				return n, err
			}
			n, err = s.PathSocket.WriteBatch(ms[i+1:])
			return i + 1 + n, err
		}
	}
	return s.PathSocket.WriteBatch(ms)
}

// A rank that closes right after an eager send whose datagram was lost
// lingers until the resend is acknowledged, so the peer's receive
// completes instead of failing with the connection. The linger is longer
// than the default 1 s: the resend waits for a retransmission timeout,
// which before the path's first RTT sample is at least 1 s.
func TestCloseLingersUntilSendsAcknowledged(t *testing.T) {
	var dropped atomic.Bool
	eps := newTestWorld(t, 2, Config{OpenSocket: dropFirstData(&dropped), CloseLinger: 10 * time.Second})
	ctx := testCtx(t)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: lingerComm, Op: 1}}
	got := make([]byte, 100)
	r := eps[1].Recv(0, tag, got)
	_, err := eps[0].Send(1, tag, transporttest.Pattern(100, 3)).Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, eps[0].Close())
	require.True(t, dropped.Load(), "the first DATA was not dropped")
	n, err := r.Wait(ctx)
	require.NoError(t, err, "the peer's receive failed when the sender closed")
	require.Equal(t, 100, n)
	require.NoError(t, transporttest.Verify(got, 3))
}

// On loopback the core's MinRTO defaults to DefaultLoopbackMinRTO (within
// MaxRTO); a MinRTO that is set is kept.
func TestLoopbackMinRTO(t *testing.T) {
	for _, tc := range []struct {
		core metaroce.Config
		want time.Duration
	}{
		{metaroce.Config{}, DefaultLoopbackMinRTO},
		{metaroce.Config{MaxRTO: 3 * time.Millisecond}, 3 * time.Millisecond},
		{metaroce.Config{MinRTO: time.Millisecond}, time.Millisecond},
	} {
		c, err := Config{Size: 2, Core: tc.core}.withDefaults()
		require.NoError(t, err)
		require.Equal(t, tc.want, c.Core.MinRTO, "%+v", tc.core)
	}
	c, err := Config{Size: 2}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultLoopbackAckDelay, c.Core.AckDelay)
	require.Equal(t, DefaultLoopbackDelayTarget, c.Core.DelayTarget)
	require.True(t, c.Core.PiggybackAcks)
	c, err = Config{Size: 2, ListenAddr: netip.MustParseAddrPort("10.0.0.1:0")}.withDefaults()
	require.NoError(t, err)
	require.Zero(t, c.Core.MinRTO, "a NIC address keeps the core's default")
	require.Zero(t, c.Core.AckDelay, "a NIC address keeps the core's default")
	require.Zero(t, c.Core.DelayTarget, "a NIC address keeps the core's default")
}

// Payloads go unchecked only on loopback with the real sockets, or when
// asked; an interposed socket or a NIC address keeps them checked.
func TestPayloadCRCDefaults(t *testing.T) {
	nic := netip.MustParseAddrPort("10.0.0.1:0")
	opener := func(int, netip.AddrPort) (PathSocket, error) { return nil, nil }
	for _, tc := range []struct {
		cfg       Config
		unchecked bool
	}{
		{Config{}, true},
		{Config{PayloadCRC: PayloadCRCOn}, false},
		{Config{OpenSocket: opener}, false},
		{Config{ListenAddr: nic}, false},
		{Config{ListenAddr: nic, PayloadCRC: PayloadCRCOff}, true},
	} {
		tc.cfg.Size = 2
		c, err := tc.cfg.withDefaults()
		require.NoError(t, err)
		require.Equal(t, tc.unchecked, c.Core.PayloadUnchecked, "%+v", tc.cfg)
	}
	_, err := Config{Size: 2, PayloadCRC: 7}.withDefaults()
	require.ErrorContains(t, err, "PayloadCRC=7")
}

// The copies of completed eager sends are reused for later ones, and only
// they: the caller's buffer of an empty send (which is not copied) never
// becomes a copy, however much room it has. Many rounds of sends of a few
// sizes arrive intact.
func TestEagerCopiesReused(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	ctx := testCtx(t)
	room := make([]byte, 0, 4096)
	guard := append(room[:0:4096], transporttest.Pattern(4096, 3)...)[:0]
	for round := range 50 {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 6, Op: uint64(round)}}
		sizes := []int{0, 1000, 3000, 4096, 20000}
		var reqs []transport.Request
		got := make([][]byte, len(sizes))
		for i, n := range sizes {
			got[i] = make([]byte, n)
			reqs = append(reqs, eps[1].Recv(0, transport.Tag{OpKey: tag.OpKey, Seq: uint32(i)}, got[i]))
		}
		for i, n := range sizes {
			buf := guard // an empty send from a buffer with room
			if n > 0 {
				buf = transporttest.Pattern(n, uint64(round*10+i))
			}
			reqs = append(reqs, eps[0].Send(1, transport.Tag{OpKey: tag.OpKey, Seq: uint32(i)}, buf))
		}
		for _, r := range reqs {
			_, err := r.Wait(ctx)
			require.NoError(t, err)
		}
		for i, n := range sizes {
			if n > 0 {
				require.NoError(t, transporttest.Verify(got[i], uint64(round*10+i)), "round %d size %d", round, n)
			}
		}
	}
	require.NoError(t, transporttest.Verify(guard[:4096], 3), "an empty send's buffer was written")
	// A released send's copy goes back to the pool when its last packet is
	// acknowledged, which may come after the receiver saw the data.
	var kept int
	require.Eventually(t, func() bool {
		eps[0].eng.lock()
		defer eps[0].eng.unlock()
		kept = eps[0].eagerFree.bytes
		return eps[0].eagerHeld == 0
	}, 10*time.Second, time.Millisecond, "copies of released sends still held after 10 s")
	require.Positive(t, kept, "no copy was kept for reuse")
}
