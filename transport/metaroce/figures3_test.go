package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestFigureGoodputByRTT prints one connection's goodput as a fraction of
// capacity (4 paths of 200 Mbit/s, 4 MiB queues, loss on every link in
// both directions) at round trips of 100 µs to 100 ms, with loss, and
// over paths of 2 and 20 ms together: steady state (10% to 90% of the
// bytes) of 32 MiB, of 128 MiB at 20 ms and beyond with 9000-byte
// datagrams, where slow start takes longer, and of 64 MiB with 1452-byte
// ones. Run with -v to see the table.
func TestFigureGoodputByRTT(t *testing.T) {
	type row struct {
		rtts     []time.Duration
		loss     float64
		datagram int
		floor    float64 // the least goodput, as a fraction of capacity, that passes
	}
	ms := time.Millisecond
	mixed := []time.Duration{2 * ms, 20 * ms, 2 * ms, 20 * ms}
	var rows []row
	for _, rtt := range []time.Duration{100 * time.Microsecond, 2 * ms, 20 * ms, 100 * ms} {
		rows = append(rows, row{[]time.Duration{rtt}, 0, 9000, 0.85}, row{[]time.Duration{rtt}, 0.01, 9000, 0.6},
			row{[]time.Duration{rtt}, 0.05, 9000, 0.3})
	}
	rows = append(rows, row{[]time.Duration{20 * ms}, 0, 1452, 0.85}, row{[]time.Duration{100 * ms}, 0, 1452, 0.8},
		row{mixed, 0, 9000, 0.85}, row{mixed, 0.01, 9000, 0.8})
	for i, r := range rows {
		name := fmt.Sprintf("rtt=%v/loss=%g/datagram=%d", r.rtts, r.loss, r.datagram)
		t.Run(name, func(t *testing.T) {
			seed := int64(300 + i)
			s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: r.datagram})
			s.wanPair(wanLinks(4, r.loss, r.rtts...))
			ca, cb := s.connect(0, 1)
			count := 8 // 32 MiB
			switch {
			case r.datagram < 9000:
				count = 16 // six times the packets per byte
			case r.rtts[len(r.rtts)-1] >= 20*ms:
				count = 32
			}
			steady, whole := stream(s, 0, 1, ca, cb, count, 4<<20, 5*time.Minute)
			_, ps := s.pathStats(0, ca)
			lost, sent, timeouts, lossCuts, delayCuts := int64(0), int64(0), int64(0), int64(0), int64(0)
			for _, p := range ps {
				lost += p.PacketsLost
				sent += p.PacketsSent
				timeouts += p.Timeouts
				lossCuts += p.CutsLoss
				delayCuts += p.CutsDelay
			}
			capacity := 4.0 * labRate
			t.Logf("%-34s goodput %5.1f%% of capacity (whole transfer %5.1f%%); %d of %d packets lost, %d timeouts, cuts %d loss %d delay; srtt %v cwnd %d",
				name, 100*steady/capacity, 100*whole/capacity, lost, sent, timeouts, lossCuts, delayCuts, ps[0].SRTT.Round(time.Microsecond), ps[0].Cwnd)
			if steady/capacity < r.floor {
				t.Errorf("goodput %.1f%% of capacity, below %.0f%% (seed %d)", 100*steady/capacity, 100*r.floor, seed)
			}
		})
	}
}

// TestFigureDelayRaisedMidRun raises one of 4 paths' round trip from 2 to
// 20 ms (both directions) in the middle of a transfer and prints the
// goodput, as a fraction of capacity, in the second before the change and
// in each of the 3 seconds after it.
func TestFigureDelayRaisedMidRun(t *testing.T) {
	const seed = 41
	s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: 9000})
	cfgs := wanLinks(4, 0, 2*time.Millisecond)
	links := s.wanPair(cfgs)
	ca, cb := s.connect(0, 1)
	t0 := s.fab.Now()
	change := t0 + 2*time.Second
	slow := cfgs[0]
	slow.Delay = 10 * time.Millisecond
	for _, l := range links[0:2] {
		require.NoError(t, s.fab.Schedule(simfabric.Fault{At: change, Link: l, Kind: simfabric.SetConfig, Config: slow}))
	}
	p := startPump(s, ca, cb, 1<<20, 32)
	var series []sample
	for at := t0; at <= change+3*time.Second; at += 10 * time.Millisecond {
		s.runTo(at)
		series = append(series, sample{at, s.arrived(1, cb)})
	}
	capacity := 4.0 * labRate
	before := rateBetween(series, change-time.Second, change) / capacity
	var after []float64
	for k := range 3 {
		from := change + time.Duration(k)*time.Second
		after = append(after, rateBetween(series, from, from+time.Second)/capacity)
	}
	_, ps := s.pathStats(0, ca)
	t.Logf("path 0 from 2 to 20 ms RTT at %v: goodput %.1f%% of capacity in the second before; %.1f%%, %.1f%%, %.1f%% in the 3 seconds after; path 0 srtt %v cwnd %d",
		change, 100*before, 100*after[0], 100*after[1], 100*after[2], ps[0].SRTT.Round(time.Microsecond), ps[0].Cwnd)
	require.Positive(t, p.done)
	require.GreaterOrEqual(t, before, 0.9, "seed %d", seed)
	require.GreaterOrEqual(t, after[1], 0.85, "seed %d: below 85%% of capacity in the second second after the change", seed)
}
