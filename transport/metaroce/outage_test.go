package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestAllPathsCutThenRestored cuts every path in both directions for 30 ms
// (well within the idle timeout) in the middle of a transfer: every path
// dies, and when the network comes back the probes revive them and the
// transfer completes intact.
func TestAllPathsCutThenRestored(t *testing.T) {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, 11, 2, cfg)
	var links []simfabric.LinkID
	for i := range 4 {
		f := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay, QueueBytes: 512 << 10})
		r := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay, QueueBytes: 512 << 10})
		s.path(0, 1, i, f)
		s.path(1, 0, i, r)
		links = append(links, f, r)
	}
	ca, cb := s.connect(0, 1)
	cut := s.fab.Now() + time.Millisecond
	for _, l := range links {
		require.NoError(t, s.fab.Schedule(
			simfabric.Fault{At: cut, Link: l, Kind: simfabric.Cut},
			simfabric.Fault{At: cut + 30*time.Millisecond, Link: l, Kind: simfabric.Restore}))
	}
	want := fill(8<<20, 1)
	got := make([]byte, len(want))
	require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, 1, 1, got))
	require.NoError(t, s.eps[0].Send(s.fab.Now(), ca, 1, 1, want))
	s.runUntil(time.Second, func() bool { return s.count(1, metaroce.EventRecvDone, 1, 1) == 1 })
	ev, _ := s.find(1, metaroce.EventRecvDone, 1, 1)
	require.NoError(t, ev.ev.Err)
	require.Equal(t, want, got)
	dead := 0
	for _, e := range s.log {
		if e.node == 0 && e.ev.Kind == metaroce.EventPathState && e.ev.State == metaroce.PathDead {
			dead++
		}
	}
	require.Equal(t, 4, dead, "every path should have died during the outage")
	t.Logf("outage %v..%v; message complete at %v", cut, cut+30*time.Millisecond, ev.at)
}

// TestOneLargeMessageOverManyPaths sends one 48 MiB message over 8 paths
// with 2% loss: pieces arrive far out of order and the receiver's piece set
// must still count every piece once.
func TestOneLargeMessageOverManyPaths(t *testing.T) {
	cfg := figureConfig()
	s := newSim(t, 12, 2, cfg)
	links := equalPaths(8, unitRate)
	for i := range links {
		links[i].Loss = 0.02
	}
	s.pair(0, 1, links...)
	ca, cb := s.connect(0, 1)
	want := fill(48<<20, 7)
	got := make([]byte, len(want))
	require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, 9, 9, got))
	require.NoError(t, s.eps[0].Send(s.fab.Now(), ca, 9, 9, want))
	start := s.fab.Now()
	s.runUntil(time.Second, func() bool { return s.count(0, metaroce.EventSendDone, 9, 9) == 1 })
	ev, ok := s.find(1, metaroce.EventRecvDone, 9, 9)
	require.True(t, ok)
	require.Equal(t, len(want), ev.ev.N)
	require.Equal(t, want, got)
	rate := float64(len(want)) / (ev.at - start).Seconds()
	t.Logf("48 MiB over 8 paths at 2%% loss: %s = %.1f%% of capacity, whole transfer", gbps(rate), 100*rate/(8*unitRate))
}
