package mrtransport

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
	"github.com/stretchr/testify/require"
)

// coalescedWorld is a loopback world whose endpoints run the endpoint
// reader (MTU-sized datagrams, so not read into place); with allFar every
// peer counts as far, so that the reader naps after every read.
func coalescedWorld(t *testing.T, size int, allFar bool) []*Endpoint {
	t.Helper()
	linuxOnly(t, "the endpoint reader")
	eps := newTestWorld(t, size, Config{MaxDatagram: 1452, CoalesceWait: time.Millisecond})
	for _, ep := range eps {
		e := ep.eng
		require.Equal(t, time.Millisecond, e.coalesce, "endpoint reader off")
		if allFar {
			e.lock()
			e.far.of = func(_ time.Duration, far map[netip.AddrPort]bool) {
				ep.farPeers(0, far) // every connected peer's addresses, far
			}
			e.far.at = 0
			e.mu.Unlock()
		}
	}
	return eps
}

// TestConformanceCoalesced runs the conformance suite over the endpoint
// reader, with the loopback's near peers (no naps) and with every peer
// taken for far (a nap after every read).
func TestConformanceCoalesced(t *testing.T) {
	for _, allFar := range []bool{false, true} {
		t.Run(map[bool]string{false: "near", true: "far"}[allFar], func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint {
				return asTransport(coalescedWorld(t, size, allFar))
			})
		})
	}
}

// TestCoalescedNaps: the endpoint reader naps for far peers' datagrams
// only.
func TestCoalescedNaps(t *testing.T) {
	for _, allFar := range []bool{false, true} {
		eps := coalescedWorld(t, 2, allFar)
		ctx := t.Context()
		buf := make([]byte, 1<<20)
		got := make([]byte, len(buf))
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		for i := range 5 {
			tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: uint64(i)}}
			r := eps[1].Recv(0, tag, got)
			s := eps[0].Send(1, tag, buf)
			_, err := s.Wait(ctx)
			require.NoError(t, err)
			_, err = r.Wait(ctx)
			require.NoError(t, err)
			require.Equal(t, buf, got)
		}
		naps := eps[0].Stats().Engine.Naps + eps[1].Stats().Engine.Naps
		if allFar {
			require.Positive(t, naps, "no nap with far peers")
		} else {
			require.Zero(t, naps, "naps with near (loopback) peers")
		}
	}
}
