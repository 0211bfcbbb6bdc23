package metaroce_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestPeerTimeoutWhenAllPathsCut cuts every link of a 20 ms connection
// silently in the middle of a 16 MiB transfer, while the receiver also
// waits for a message the peer never sends: the sender's send and both
// receives fail with a PeerTimeoutError within PeerTimeout (plus an RTO
// of slack) of the cut, in virtual time, and no earlier than PeerTimeout
// after the last packet that crossed before it.
func TestPeerTimeoutWhenAllPathsCut(t *testing.T) {
	const seed = 21
	cfg := metaroce.Config{Paths: 4, MaxDatagram: 9000}
	s := newSim(t, seed, 2, cfg)
	links := s.wanPair(wanLinks(4, 0, 20*time.Millisecond))
	ca, cb := s.connect(0, 1)
	now := s.fab.Now()
	require.NoError(t, s.eps[1].PostRecv(now, cb, 1, 1, make([]byte, 16<<20)))
	require.NoError(t, s.eps[1].PostRecv(now, cb, 2, 2, make([]byte, 8))) // never sent
	require.NoError(t, s.eps[0].Send(now, ca, 1, 1, fill(16<<20, 1)))
	cut := now + 200*time.Millisecond
	for _, l := range links {
		require.NoError(t, s.fab.Schedule(simfabric.Fault{At: cut, Link: l, Kind: simfabric.Cut}))
	}
	limit := cut + metaroce.DefaultPeerTimeout + time.Second
	s.runUntil(limit, func() bool {
		return s.count(0, metaroce.EventSendDone, 1, 1) == 1 && s.count(1, metaroce.EventRecvDone, 1, 1) == 1 &&
			s.count(1, metaroce.EventRecvDone, 2, 2) == 1
	})
	for _, e := range []struct {
		node int
		kind metaroce.EventKind
		key  uint64
	}{{0, metaroce.EventSendDone, 1}, {1, metaroce.EventRecvDone, 1}, {1, metaroce.EventRecvDone, 2}} {
		ev, _ := s.find(e.node, e.kind, e.key, e.key)
		require.ErrorIs(t, ev.ev.Err, metaroce.ErrPeerTimeout, "node %d %v (seed %d)", e.node, e.kind, seed)
		require.ErrorIs(t, ev.ev.Err, metaroce.ErrPeerGone)
		var pt *metaroce.PeerTimeoutError
		require.True(t, errors.As(ev.ev.Err, &pt))
		require.Contains(t, ev.ev.Err.Error(), "stopped answering")
		after := ev.at - cut
		// The last packet heard arrived at most an RTT before the cut.
		require.GreaterOrEqual(t, after, metaroce.DefaultPeerTimeout-20*time.Millisecond, "node %d failed too soon (seed %d)", e.node, seed)
		require.LessOrEqual(t, after, metaroce.DefaultPeerTimeout+200*time.Millisecond, "node %d (seed %d)", e.node, seed)
		t.Logf("node %d %v failed %v after the cut: %v", e.node, e.kind, after, ev.ev.Err)
	}
	for node := range 2 {
		closed := false
		for _, e := range s.log {
			if e.node == node && e.ev.Kind == metaroce.EventClosed {
				closed = true
				require.ErrorIs(t, e.ev.Err, metaroce.ErrPeerTimeout)
			}
		}
		require.True(t, closed, "node %d", node)
	}
}

// TestNoFalsePeerTimeoutAtFivePercentLoss keeps a receive posted for a
// simulated minute over a 100 ms connection with 5% loss on every link
// in both directions, with nothing sent for it, while a 1 MiB message
// goes each way every 5 s (so the connection is silent but for probes
// for seconds at a time, more than PeerTimeout): no connection fails,
// and the waiting receive completes when its message is finally sent.
func TestNoFalsePeerTimeoutAtFivePercentLoss(t *testing.T) {
	const seed = 22
	s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: 9000})
	s.wanPair(wanLinks(4, 0.05, 100*time.Millisecond))
	ca, cb := s.connect(0, 1)
	start := s.fab.Now()
	waiting := make([]byte, 8)
	require.NoError(t, s.eps[1].PostRecv(start, cb, 7, 7, waiting))
	for i := range 12 {
		at := start + time.Duration(i)*5*time.Second
		s.runTo(at)
		msg := uint64(100 + i)
		require.NoError(t, s.eps[1].PostRecv(at, cb, 1, msg, make([]byte, 1<<20)))
		require.NoError(t, s.eps[0].Send(at, ca, 1, msg, fill(1<<20, byte(i))))
		require.NoError(t, s.eps[0].PostRecv(at, ca, 2, msg, make([]byte, 1<<20)))
		require.NoError(t, s.eps[1].Send(at, cb, 2, msg, fill(1<<20, byte(i))))
	}
	s.runTo(start + time.Minute)
	for _, e := range s.log {
		require.NotEqual(t, metaroce.EventClosed, e.ev.Kind, "node %d at %v: %v (seed %d)", e.node, e.at, e.ev.Err, seed)
		if e.ev.Kind == metaroce.EventRecvDone || e.ev.Kind == metaroce.EventSendDone {
			require.NoError(t, e.ev.Err, "seed %d", seed)
		}
	}
	require.Equal(t, 12, countKind(s, 1, metaroce.EventRecvDone), "seed %d", seed)
	require.Equal(t, 12, countKind(s, 0, metaroce.EventRecvDone), "seed %d", seed)
	require.NoError(t, s.eps[0].Send(s.fab.Now(), ca, 7, 7, []byte("finally!")))
	s.runUntil(s.fab.Now()+10*time.Second, func() bool { return s.count(1, metaroce.EventRecvDone, 7, 7) == 1 })
	require.Equal(t, "finally!", string(waiting))
}

func countKind(s *sim, node int, kind metaroce.EventKind) int {
	n := 0
	for _, e := range s.log {
		if e.node == node && e.ev.Kind == kind {
			n++
		}
	}
	return n
}
