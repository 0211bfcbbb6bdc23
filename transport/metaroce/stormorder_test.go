package metaroce_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/stretchr/testify/require"
)

// TestStormOutOfOrderAtEventSpeed is mrtransport's
// TestStormCollectiveLoopback in virtual time: one sender queues 700
// pairs (a 64-byte header and 16 KiB of data, as gocoll's collective
// layer sends them) in a shuffled order, as 2100 goroutines hand them to
// the transport, then the receiver, its 4 MiB unexpected budget full of
// later messages, takes them pair by pair in order. Each receive whose
// data is not held waits for its grant's round trip, on the event:
// PostRecv sends the grant at once and the sender answers at once, so
// the pairs take under a round trip each on average (100 us here; 76 us
// a pair at 2100 pairs, 159.9 ms in all). The bound is two round trips a
// pair: a step that waited on a timer (an RTO, a delayed ACK, a blocked
// sender's probe) would take ms. It passed before session 30's storm work
// too (storm30: the storm test's slow phase was not in the core); it
// keeps the grant path on the event.
func TestStormOutOfOrderAtEventSpeed(t *testing.T) {
	const pairs, size = 700, 16 << 10
	cfg := metaroce.Config{Paths: 1, MsgWindow: 4 * pairs, UnexpectedBytes: 4 << 20, MaxSends: 2 * pairs, MaxRecvs: 2 * pairs}
	s := newSim(t, 1, 2, cfg)
	_, in, out := incastNet(s, 1)
	var failed []string
	done := 0
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if ev.Err != nil || ev.Kind == metaroce.EventClosed {
			failed = append(failed, fmt.Sprintf("node %d at %v: %v %v", node, at, ev.Kind, ev.Err))
		}
	}
	start := s.fab.Now()
	for _, m := range rand.New(rand.NewSource(1)).Perm(pairs) {
		require.NoError(t, s.eps[1].Send(start, out[1], 1, uint64(2*m), fill(64, byte(m))))
		require.NoError(t, s.eps[1].Send(start, out[1], 1, uint64(2*m+1), fill(size, byte(m+1))))
	}
	s.runTo(start + 100*time.Millisecond) // the budget fills
	require.Empty(t, failed)
	bufs := make([][]byte, 2*pairs)
	next := 0
	post := func(at time.Duration) {
		for k, n := range []int{64, size} {
			bufs[2*next+k] = make([]byte, n)
			require.NoError(t, s.eps[0].PostRecv(at, in[1], 1, uint64(2*next+k), bufs[2*next+k]))
		}
		next++
	}
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if ev.Err != nil || ev.Kind == metaroce.EventClosed {
			failed = append(failed, fmt.Sprintf("node %d at %v: %v %v", node, at, ev.Kind, ev.Err))
			return
		}
		if node == 0 && ev.Kind == metaroce.EventRecvDone {
			done++
			if done%2 == 0 && next < pairs {
				post(at)
			}
		}
	}
	from := s.fab.Now()
	post(from)
	s.runUntil(from+60*time.Second, func() bool { return len(failed) > 0 || done == 2*pairs })
	took := s.fab.Now() - from
	require.Empty(t, failed)
	require.Equal(t, 2*pairs, done)
	for m := range pairs {
		require.Equal(t, fill(64, byte(m)), bufs[2*m], "header %d", m)
		require.Equal(t, fill(size, byte(m+1)), bufs[2*m+1], "data %d", m)
	}
	t.Logf("%d pairs received in %v of virtual time (%v a pair)", pairs, took, took/pairs)
	require.Less(t, took, time.Duration(pairs)*4*unitDelay, "receives at more than two round trips each")
}
