package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// The long-RTT tests run a lab-like fabric: paths of 200 Mbit/s (25 MB/s)
// with a 4 MiB queue each, at round trips from 100 µs to 100 ms.
const labRate = 25_000_000

// wanLinks returns n paths of labRate with the given round trips (one
// per path, or one for all) and loss.
func wanLinks(n int, loss float64, rtts ...time.Duration) []simfabric.LinkConfig {
	links := make([]simfabric.LinkConfig, n)
	for i := range links {
		rtt := rtts[min(i, len(rtts)-1)]
		links[i] = simfabric.LinkConfig{Rate: labRate, Delay: rtt / 2, QueueBytes: 4 << 20, Loss: loss}
	}
	return links
}

// wanPair connects nodes 0 and 1 over links in both directions, each
// direction with the link's loss (unlike sim.pair, whose reverse links
// are clean), and returns the links.
func (s *sim) wanPair(links []simfabric.LinkConfig) []simfabric.LinkID {
	var ids []simfabric.LinkID
	for i, cfg := range links {
		f, r := s.link(cfg), s.link(cfg)
		s.path(0, 1, i, f)
		s.path(1, 0, i, r)
		ids = append(ids, f, r)
	}
	return ids
}

// transfer sends one message of size bytes from 0 to 1 (receive posted
// first) and returns how long it took to arrive whole, failing the test
// if it does not within limit or arrives damaged.
func transfer(s *sim, ca, cb metaroce.ConnID, msg uint64, size int, limit time.Duration) time.Duration {
	s.t.Helper()
	start := s.fab.Now()
	want := fill(size, byte(msg))
	got := make([]byte, size)
	require.NoError(s.t, s.eps[1].PostRecv(start, cb, 1, msg, got))
	require.NoError(s.t, s.eps[0].Send(start, ca, 1, msg, want))
	s.runUntil(start+limit, func() bool { return s.count(0, metaroce.EventSendDone, 1, msg) == 1 })
	ev, ok := s.find(1, metaroce.EventRecvDone, 1, msg)
	require.True(s.t, ok, "seed %d", s.seed)
	require.NoError(s.t, ev.ev.Err, "seed %d", s.seed)
	require.Equal(s.t, size, ev.ev.N, "seed %d", s.seed)
	require.True(s.t, string(want) == string(got), "message %d damaged (seed %d)", msg, s.seed)
	snd, _ := s.find(0, metaroce.EventSendDone, 1, msg)
	require.NoError(s.t, snd.ev.Err, "seed %d", s.seed)
	return ev.at - start
}

// TestLongRTT sends an 8-byte message and then 16 MiB over 4 paths at
// round trips of 100 µs to 100 ms, without loss and with 1% and 5% on
// every link in both directions, over paths of 2 and 20 ms in one
// connection, and at 10 µs and 200 ms: each arrives whole, and no path is
// left dead.
func TestLongRTT(t *testing.T) {
	type tc struct {
		rtts []time.Duration
		loss float64
	}
	var cases []tc
	for _, rtt := range []time.Duration{100 * time.Microsecond, 2 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		for _, loss := range []float64{0, 0.01, 0.05} {
			cases = append(cases, tc{[]time.Duration{rtt}, loss})
		}
	}
	mixed := []time.Duration{2 * time.Millisecond, 20 * time.Millisecond, 2 * time.Millisecond, 20 * time.Millisecond}
	cases = append(cases, tc{mixed, 0}, tc{mixed, 0.01})
	// The ends of the range: 10 µs, and 200 ms.
	cases = append(cases, tc{[]time.Duration{10 * time.Microsecond}, 0}, tc{[]time.Duration{200 * time.Millisecond}, 0},
		tc{[]time.Duration{200 * time.Millisecond}, 0.05})
	for i, c := range cases {
		for _, datagram := range []int{9000, 1452} {
			name := fmt.Sprintf("rtt=%v/loss=%g/datagram=%d", c.rtts, c.loss, datagram)
			t.Run(name, func(t *testing.T) {
				seed := int64(100 + i)
				s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: datagram})
				s.wanPair(wanLinks(4, c.loss, c.rtts...))
				ca, cb := s.connect(0, 1)
				small := transfer(s, ca, cb, 1, 8, 30*time.Second)
				large := transfer(s, ca, cb, 2, 16<<20, 60*time.Second)
				_, ps := s.pathStats(0, ca)
				for j, p := range ps {
					require.NotEqual(t, metaroce.PathDead, p.State, "path %d (seed %d)", j, seed)
				}
				rate := float64(16<<20) / large.Seconds()
				t.Logf("8 bytes in %v; 16 MiB in %v = %.0f%% of 4 x 200 Mbit/s", small, large, 100*rate/(4*labRate))
			})
		}
	}
}

// TestHandshakeSeedsRTT connects over 4 paths of 100 ms and 20 ms: before
// any data every path's smoothed RTT is the handshake's, not InitialRTT.
func TestHandshakeSeedsRTT(t *testing.T) {
	for _, rtt := range []time.Duration{100 * time.Millisecond, 20 * time.Millisecond} {
		s := newSim(t, 31, 2, metaroce.Config{Paths: 4})
		s.wanPair(wanLinks(4, 0, rtt))
		ca, cb := s.connect(0, 1)
		s.runTo(s.fab.Now() + rtt) // the acceptor hears the initiator's first ACK
		for node, c := range []metaroce.ConnID{ca, cb} {
			_, ps := s.pathStats(node, c)
			for i, p := range ps {
				require.InDelta(t, float64(rtt), float64(p.SRTT), float64(rtt)/10, "rtt %v node %d path %d", rtt, node, i)
				require.GreaterOrEqual(t, p.RTTVar, rtt/2, "rtt %v node %d path %d", rtt, node, i)
			}
		}
	}
}

// TestLongRTTPathCutAndRestored cuts one of 4 paths of 100 ms (both
// directions, silently) in the middle of a stream of 1 MiB messages and
// restores it 2 s later: the path goes suspect no sooner than its RTT
// after the cut, then dead, comes back after the restore from its probes,
// and every message arrives intact.
func TestLongRTTPathCutAndRestored(t *testing.T) {
	const seed = 32
	rtt := 100 * time.Millisecond
	s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: 9000})
	links := s.wanPair(wanLinks(4, 0, rtt))
	ca, cb := s.connect(0, 1)
	cut := s.fab.Now() + time.Second
	restore := cut + 2*time.Second
	for _, l := range links[4:6] { // path 2, both ways
		require.NoError(t, s.fab.Schedule(simfabric.Fault{At: cut, Link: l, Kind: simfabric.Cut},
			simfabric.Fault{At: restore, Link: l, Kind: simfabric.Restore}))
	}
	states := map[metaroce.PathState]time.Duration{}
	var order []metaroce.PathState
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if node == 0 && ev.Kind == metaroce.EventPathState && ev.Path == 2 {
			if _, ok := states[ev.State]; !ok || ev.State == metaroce.PathGood {
				states[ev.State] = at
			}
			order = append(order, ev.State)
		}
	}
	start := s.fab.Now()
	p := startPump(s, ca, cb, 1<<20, 32)
	s.runTo(restore)
	_, at := s.pathStats(0, ca)
	s.runTo(restore + 3*time.Second)
	took := s.fab.Now() - start
	require.Equal(t, []metaroce.PathState{metaroce.PathSuspect, metaroce.PathDead, metaroce.PathGood}, order, "seed %d", seed)
	require.GreaterOrEqual(t, states[metaroce.PathSuspect]-cut, rtt, "seed %d", seed)
	require.Greater(t, states[metaroce.PathGood], restore)
	require.Less(t, states[metaroce.PathGood]-restore, 3*time.Second, "seed %d", seed)
	for i, o := range []int{0, 1, 3} {
		_, ps := s.pathStats(0, ca)
		require.Equal(t, metaroce.PathGood, ps[o].State, "path %d (%d)", o, i)
	}
	_, ps := s.pathStats(0, ca)
	require.Greater(t, ps[2].PacketsAcked, at[2].PacketsAcked, "path 2 carries data again (seed %d)", seed)
	t.Logf("%d MiB in %v; path 2 cut at %v: suspect after %v, dead after %v; restored at %v, good again %v later",
		p.done, took, cut, states[metaroce.PathSuspect]-cut, states[metaroce.PathDead]-cut, restore, states[metaroce.PathGood]-restore)
}
