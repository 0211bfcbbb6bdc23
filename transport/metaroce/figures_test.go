package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// The figure tests use 10 Gb/s links (1.25 GB/s) with 50 µs one-way delay
// and 9000-byte datagrams: a path's bandwidth-delay product is about 14
// datagrams.
const (
	unitRate  = 1_250_000_000
	unitDelay = 50 * time.Microsecond
	jumbo     = 9000
)

func figureConfig() metaroce.Config {
	return metaroce.Config{MaxDatagram: jumbo, Paths: 8}
}

// stream sends count messages of size bytes from a to b (receives posted
// first), checks every byte, and returns the goodput in bytes/s in steady
// state (between the arrival of 10% and of 90% of the bytes, which leaves
// out start-up and tail) and over the whole transfer.
func stream(s *sim, a, b int, ca, cb metaroce.ConnID, count, size int, limit time.Duration) (steady, whole float64) {
	s.t.Helper()
	start := s.fab.Now()
	bufs := make([][]byte, count)
	for i := range count {
		bufs[i] = make([]byte, size)
		require.NoError(s.t, s.eps[b].PostRecv(start, cb, 1, uint64(i), bufs[i]))
		require.NoError(s.t, s.eps[a].Send(start, ca, 1, uint64(i), fill(size, byte(i))))
	}
	total := int64(count * size)
	base := s.arrived(b, cb)
	var t10, t90 time.Duration
	done, from := 0, len(s.log)
	s.runUntil(start+limit, func() bool {
		got := s.arrived(b, cb) - base
		if t10 == 0 && got >= total/10 {
			t10 = s.fab.Now()
		}
		if t90 == 0 && got >= total*9/10 {
			t90 = s.fab.Now()
		}
		for _, e := range s.log[from:] {
			if e.node == b && e.ev.Kind == metaroce.EventRecvDone && e.ev.Stream == 1 {
				require.NoError(s.t, e.ev.Err)
				done++
			}
		}
		from = len(s.log)
		return done == count
	})
	for i := range count {
		require.Equal(s.t, fill(size, byte(i)), bufs[i], "message %d corrupted (seed %d)", i, s.seed)
	}
	steady = float64(total*8/10) / (t90 - t10).Seconds()
	whole = float64(total) / (s.fab.Now() - start).Seconds()
	return steady, whole
}

// arrived returns the message bytes that reached node's end of c.
func (s *sim) arrived(node int, c metaroce.ConnID) int64 {
	cs, _, ok := s.eps[node].ConnStats(c, nil)
	require.True(s.t, ok)
	return cs.BytesArrived
}

func equalPaths(n int, rate int64) []simfabric.LinkConfig {
	cfgs := make([]simfabric.LinkConfig, n)
	for i := range cfgs {
		cfgs[i] = simfabric.LinkConfig{Rate: rate, Delay: unitDelay, QueueBytes: 512 << 10}
	}
	return cfgs
}

func TestFigureGoodputFourEqualPaths(t *testing.T) {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, 1, 2, cfg)
	s.pair(0, 1, equalPaths(4, unitRate)...)
	ca, cb := s.connect(0, 1)
	steady, whole := stream(s, 0, 1, ca, cb, 64, 512<<10, time.Second)
	capacity := 4.0 * unitRate
	t.Logf("4 equal paths: goodput %s = %.1f%% of capacity (whole transfer %.1f%%)",
		gbps(steady), 100*steady/capacity, 100*whole/capacity)
	require.GreaterOrEqual(t, steady/capacity, 0.95)
}

func TestFigureGoodputUnequalPaths(t *testing.T) {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, 2, 2, cfg)
	var links []simfabric.LinkConfig
	capacity := 0.0
	for _, units := range []int64{1, 2, 4, 8} {
		rate := units * unitRate / 4
		links = append(links, simfabric.LinkConfig{Rate: rate, Delay: unitDelay, QueueBytes: 512 << 10})
		capacity += float64(rate)
	}
	s.pair(0, 1, links...)
	ca, cb := s.connect(0, 1)
	steady, whole := stream(s, 0, 1, ca, cb, 64, 512<<10, time.Second)
	_, ps := s.pathStats(0, ca)
	for i, p := range ps {
		t.Logf("path %d: %d packets, cwnd %d, srtt %v, cuts ecn/loss/delay %d/%d/%d", i, p.PacketsSent, p.Cwnd, p.SRTT, p.CutsECN, p.CutsLoss, p.CutsDelay)
	}
	t.Logf("paths of 1,2,4,8 units: goodput %s = %.1f%% of capacity (whole transfer %.1f%%)",
		gbps(steady), 100*steady/capacity, 100*whole/capacity)
	require.GreaterOrEqual(t, steady/capacity, 0.90)
	require.Less(t, ps[0].PacketsSent, ps[3].PacketsSent/4, "the slowest path should carry far less")
}

func lossyGoodput(t *testing.T, loss float64, seed int64) float64 {
	cfg := figureConfig()
	cfg.Paths = 4
	s := newSim(t, seed, 2, cfg)
	links := equalPaths(4, unitRate)
	for i := range links {
		links[i].Loss = loss
	}
	s.pair(0, 1, links...)
	ca, cb := s.connect(0, 1)
	steady, _ := stream(s, 0, 1, ca, cb, 64, 512<<10, 2*time.Second)
	cs, ps := s.pathStats(0, ca)
	lost, sent := int64(0), int64(0)
	for _, p := range ps {
		lost += p.PacketsLost
		sent += p.PacketsSent
	}
	t.Logf("loss %.0f%%: goodput %s = %.1f%% of capacity; %d of %d packets declared lost, rtx queue %d",
		100*loss, gbps(steady), 100*steady/(4*unitRate), lost, sent, cs.RetransmitQueue)
	return steady / (4 * unitRate)
}

func TestFigureGoodputUnderOnePercentLoss(t *testing.T) {
	for _, seed := range []int64{3, 31, 62} {
		require.GreaterOrEqual(t, lossyGoodput(t, 0.01, seed), 0.90, "seed %d", seed)
	}
}

func TestFigureGoodputUnderFivePercentLoss(t *testing.T) {
	for _, seed := range []int64{4, 31, 62} {
		require.GreaterOrEqual(t, lossyGoodput(t, 0.05, seed), 0.75, "seed %d", seed)
	}
}
