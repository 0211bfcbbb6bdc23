package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// sample is the bytes that had arrived at a time.
type sample struct {
	at    time.Duration
	bytes int64
}

// rateBetween returns the arrival rate in bytes/s over [from, to] from a
// series of samples.
func rateBetween(ss []sample, from, to time.Duration) float64 {
	var a, b *sample
	for i := range ss {
		if a == nil && ss[i].at >= from {
			a = &ss[i]
		}
		if ss[i].at <= to {
			b = &ss[i]
		}
	}
	if a == nil || b == nil || b.at <= a.at {
		return 0
	}
	return float64(b.bytes-a.bytes) / (b.at - a.at).Seconds()
}

func TestFigurePathCutMidTransfer(t *testing.T) {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, 5, 2, cfg)
	links := s.pair(0, 1, equalPaths(4, unitRate)...)
	ca, cb := s.connect(0, 1)
	cutAt := s.fab.Now() + 2*time.Millisecond
	require.NoError(t, s.fab.Schedule(simfabric.Fault{At: cutAt, Link: links[2], Kind: simfabric.Cut}))
	var suspect, dead time.Duration
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if node != 0 || ev.Kind != metaroce.EventPathState || ev.Path != 2 {
			return
		}
		if ev.State == metaroce.PathSuspect && suspect == 0 {
			suspect = at
		}
		if ev.State == metaroce.PathDead && dead == 0 {
			dead = at
		}
	}

	const count, size = 64, 512 << 10
	bufs := make([][]byte, count)
	for i := range count {
		bufs[i] = make([]byte, size)
		require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, 1, uint64(i), bufs[i]))
		require.NoError(t, s.eps[0].Send(s.fab.Now(), ca, 1, uint64(i), fill(size, byte(i))))
	}
	var series []sample
	s.runUntil(time.Second, func() bool {
		series = append(series, sample{s.fab.Now(), s.arrived(1, cb)})
		return s.count(1, metaroce.EventRecvDone, 1, count-1) == 1
	})
	for i := range count {
		ev, ok := s.find(1, metaroce.EventRecvDone, 1, uint64(i))
		require.True(t, ok)
		require.NoError(t, ev.ev.Err)
		require.Equal(t, fill(size, byte(i)), bufs[i], "message %d", i)
	}
	rtt := 2 * unitDelay
	remaining := 3.0 * unitRate
	before := rateBetween(series, cutAt-time.Millisecond, cutAt)
	recovered := time.Duration(-1)
	for at := cutAt; at < cutAt+20*rtt; at += rtt / 4 {
		if rateBetween(series, at, at+5*rtt) >= 0.9*remaining {
			recovered = at - cutAt
			break
		}
	}
	_, ps := s.pathStats(0, ca)
	t.Logf("cut path 2 at %v: before %s; its packets moved to other paths after %v (%.1f RTT), path dead after %v (%.1f RTT); "+
		"goodput >= 90%% of remaining capacity from %v (%.1f RTT) after the cut, over the next 5 RTT; path 2 lost %d packets, %d timeouts",
		cutAt, gbps(before), suspect-cutAt, float64(suspect-cutAt)/float64(rtt), dead-cutAt, float64(dead-cutAt)/float64(rtt), recovered,
		float64(recovered)/float64(rtt), ps[2].PacketsLost, ps[2].Timeouts)
	require.Equal(t, metaroce.PathDead, ps[2].State)
	require.GreaterOrEqual(t, recovered, time.Duration(0), "goodput never recovered")
	require.LessOrEqual(t, recovered, 10*rtt)
	require.LessOrEqual(t, suspect-cutAt, 4*rtt)
	require.LessOrEqual(t, dead-cutAt, 10*rtt)
}

func TestFigureECNPathCarriesLessThenRecovers(t *testing.T) {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, 6, 2, cfg)
	paths := equalPaths(4, unitRate)
	links := s.pair(0, 1, paths...)
	ca, cb := s.connect(0, 1)
	t0 := s.fab.Now()
	marking := paths[0]
	marking.ECNThresholdBytes = 1
	require.NoError(t, s.fab.Schedule(
		simfabric.Fault{At: t0 + 3*time.Millisecond, Link: links[0], Kind: simfabric.SetConfig, Config: marking},
		simfabric.Fault{At: t0 + 8*time.Millisecond, Link: links[0], Kind: simfabric.SetConfig, Config: paths[0]},
	))
	const count, size = 160, 512 << 10
	for i := range count {
		require.NoError(t, s.eps[1].PostRecv(t0, cb, 1, uint64(i), make([]byte, size)))
		require.NoError(t, s.eps[0].Send(t0, ca, 1, uint64(i), fill(size, byte(i))))
	}
	share := func(until time.Duration) float64 {
		_, before := s.pathStats(0, ca)
		s.runTo(until)
		_, after := s.pathStats(0, ca)
		all := int64(0)
		for i := range after {
			all += after[i].PacketsSent - before[i].PacketsSent
		}
		return float64(after[0].PacketsSent-before[0].PacketsSent) / float64(all)
	}
	share(t0 + time.Millisecond)
	clean := share(t0 + 3*time.Millisecond)
	share(t0 + 4*time.Millisecond) // the cut takes hold
	marked := share(t0 + 8*time.Millisecond)
	share(t0 + 11*time.Millisecond) // additive increase brings it back
	after := share(t0 + 14*time.Millisecond)
	_, ps := s.pathStats(0, ca)
	t.Logf("path 0 share of packets: %.1f%% before marking, %.1f%% while marking (%d CE echoed, %d ECN cuts), %.1f%% from 3 ms after it stopped",
		100*clean, 100*marked, ps[0].ECNEchoed, ps[0].CutsECN, 100*after)
	require.Greater(t, clean, 0.2)
	require.Less(t, marked, clean/2)
	require.Greater(t, after, 0.2)
}
