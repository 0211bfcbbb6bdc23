package mrtransport

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRepickPathMovesThePort re-picks a path's port on each rank while
// AllReduces run: they complete with the right sums, each rank publishes
// the new port, its peer sends there, and the moved paths carry traffic
// afterwards.
func TestRepickPathMovesThePort(t *testing.T) {
	ctx := testCtx(t)
	eps, err := NewLocalWorld(ctx, 2, Config{Paths: 4})
	require.NoError(t, err)
	defer func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	}()
	for _, ep := range eps {
		ep.eng.retireAfter = 300 * time.Millisecond // the peers learn of a move within microseconds here
	}
	comms := newComms(t, eps)
	before := []netip.AddrPort{eps[0].Addr().Paths[1], eps[1].Addr().Paths[2]}
	done := make(chan struct{})
	go func() {
		defer close(done)
		allReduceSum(t, comms, 1<<20)
	}()
	require.NoError(t, eps[0].repickPath(1, false))
	require.NoError(t, eps[1].repickPath(2, false))
	<-done
	after := []netip.AddrPort{eps[0].Addr().Paths[1], eps[1].Addr().Paths[2]}
	for i := range after {
		require.NotEqual(t, before[i], after[i], "rank %d's moved path", i)
	}
	peerAddr := func(ep *Endpoint, rank, path int) netip.AddrPort {
		ep.eng.lock()
		defer ep.eng.unlock()
		return ep.peers[rank].addrs[path]
	}
	require.Equal(t, after[0], peerAddr(eps[1], 0, 1), "rank 1 sends rank 0's path 1 to its new port")
	require.Equal(t, after[1], peerAddr(eps[0], 1, 2), "rank 0 sends rank 1's path 2 to its new port")

	// Once the old sockets are closed, what the peers send reaches the new
	// ones only (a datagram to an old one would make its sender's
	// connection fail, as a dead peer's port unreachable does).
	for _, ep := range eps {
		require.Eventually(t, func() bool {
			ep.eng.lock()
			defer ep.eng.unlock()
			return len(ep.eng.retiring) == 0
		}, 10*time.Second, 10*time.Millisecond, "old sockets closed")
	}
	// Under load a path may lose a burst (a socket buffer overflows) and
	// sit out one call after its timeout, and with every path's window
	// open the sender fills the widest ones first (pickPath) and may leave
	// a fresh path's unused; so the calls repeat, boundedly, until the
	// moved socket has carried traffic: its own packets acknowledged
	// there, or the peer's packets read there.
	before0 := eps[0].Stats().Peers[0].Paths[1]
	for round := 0; ; round++ {
		allReduceSum(t, comms, 1<<20)
		if now := eps[0].Stats().Peers[0].Paths[1]; now.PacketsAcked > before0.PacketsAcked || now.PacketsRecv > before0.PacketsRecv {
			break
		}
		require.Less(t, round, 20, "the moved path carries traffic: %+v", eps[0].Stats().Peers[0].Paths[1])
	}
	for _, ep := range eps {
		require.Zero(t, ep.Stats().Engine.PeerGone)
	}
}

func TestParseMove(t *testing.T) {
	path, port, err := parseMove(appendMove(nil, 7, 50001))
	require.NoError(t, err)
	require.Equal(t, 7, path)
	require.Equal(t, uint16(50001), port)
	for _, bad := range [][]byte{appendMove(nil, 1, 0), appendMove(nil, 1, 5)[:5], append(appendMove(nil, 1, 5), 0)} {
		_, _, err := parseMove(bad)
		require.Error(t, err)
	}
}

func FuzzParseMove(f *testing.F) {
	f.Add(appendMove(nil, 3, 40000))
	f.Add([]byte{ctrlVersion, ctrlMove})
	f.Fuzz(func(t *testing.T, b []byte) {
		path, port, err := parseMove(b)
		if err != nil {
			return
		}
		if again := appendMove(nil, path, port); string(again) != string(b) {
			t.Fatalf("parseMove(%x) = %d %d, which encodes as %x", b, path, port, again)
		}
	})
}
