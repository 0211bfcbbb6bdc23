package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// jain returns Jain's fairness index of xs: 1 when all are equal, 1/n when
// one has everything.
func jain(xs []float64) float64 {
	sum, sq := 0.0, 0.0
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// TestFigureIncast runs 16 senders into one receiver behind one bottleneck
// link, then a 17th joins.
func TestFigureIncast(t *testing.T) {
	const senders = 16
	cfg := figureConfig()
	cfg.Paths = 1
	cfg.RecvCapacity = unitRate
	s := newSim(t, 7, senders+2, cfg)
	const rcv = 0
	half := unitDelay / 2
	bottleneck := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20})
	for i := 1; i <= senders+1; i++ {
		up := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20})
		s.path(i, rcv, 0, up, bottleneck)
		s.path(rcv, i, 0, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay}))
	}
	conns := make([]metaroce.ConnID, senders+2) // receiver's end, by sender
	out := make([]metaroce.ConnID, senders+2)   // sender's end
	for i := 1; i <= senders+1; i++ {
		out[i], conns[i] = s.connect(i, rcv)
	}
	const size, count = 256 << 10, 12
	post := func(i int, at time.Duration) {
		for m := range count {
			require.NoError(t, s.eps[rcv].PostRecv(at, conns[i], 1, uint64(m), make([]byte, size)))
			require.NoError(t, s.eps[i].Send(at, out[i], 1, uint64(m), fill(size, byte(m))))
		}
	}
	t0 := s.fab.Now()
	for i := 1; i <= senders; i++ {
		post(i, t0)
	}
	arrived := func() []float64 {
		xs := make([]float64, senders)
		for i := range xs {
			xs[i] = float64(s.arrived(rcv, conns[i+1]))
		}
		return xs
	}
	s.runTo(t0 + 4*time.Millisecond)
	a := arrived()
	s.runTo(t0 + 12*time.Millisecond)
	b := arrived()
	rates := make([]float64, senders)
	total := 0.0
	for i := range rates {
		rates[i] = (b[i] - a[i]) / (8 * time.Millisecond).Seconds()
		total += rates[i]
	}
	fair := jain(rates)
	// The standing queue once settled shows in every sender's smoothed RTT.
	var queueDelay time.Duration
	for i := 1; i <= senders; i++ {
		_, ps := s.pathStats(i, out[i])
		queueDelay = max(queueDelay, ps[0].SRTT-ps[0].MinRTT)
	}

	// Sender 17 joins.
	join := s.fab.Now()
	post(senders+1, join)
	_, ps := s.pathStats(senders+1, out[senders+1])
	var series []sample
	s.runUntil(join+5*time.Millisecond, func() bool {
		series = append(series, sample{s.fab.Now(), s.arrived(rcv, conns[senders+1])})
		return s.fab.Now() >= join+2*time.Millisecond
	})
	cs, ps := s.pathStats(senders+1, out[senders+1])
	rtt := ps[0].MinRTT
	share := float64(unitRate) / (senders + 1)
	newRate := rateBetween(series, join+2*rtt, join+6*rtt)

	st := s.fab.Stats().Links[bottleneck]
	loss := float64(st.Dropped().Packets) / float64(st.Sent.Packets)
	t.Logf("incast %d->1: aggregate %s (%.1f%% of the bottleneck), Jain %.4f over 4-12 ms, bottleneck loss %.4f%% (%d of %d), max queue %d KiB",
		senders, gbps(total), 100*total/unitRate, fair, 100*loss, st.Dropped().Packets, st.Sent.Packets, st.MaxQueueBytes>>10)
	t.Logf("settled standing queue: at most %v of delay (%d KiB at the bottleneck rate)",
		queueDelay, int64(queueDelay.Seconds()*unitRate)>>10)
	t.Logf("joiner: base RTT %v, told rate %s (share %s), arrival rate over RTT 2-6 after joining %s = %.0f%% of its share",
		rtt, gbps(float64(cs.PeerRate)), gbps(share), gbps(newRate), 100*newRate/share)
	require.Less(t, loss, 0.001)
	require.GreaterOrEqual(t, fair, 0.95)
	require.Greater(t, total, 0.9*unitRate)
	require.LessOrEqual(t, st.MaxQueueBytes, senders*cfg.MaxDatagram*16+cfg.MaxDatagram)
	require.Less(t, queueDelay, 100*time.Microsecond)
	require.InDelta(t, share, float64(cs.PeerRate), 0.05*share, "told share (less any drain)")
	require.GreaterOrEqual(t, newRate, 0.8*share)
}

// TestIncastMeasuresCapacity leaves RecvCapacity unset: the receiver must
// measure the bottleneck from the standing queue the first burst builds,
// then share it.
func TestIncastMeasuresCapacity(t *testing.T) {
	const senders = 8
	cfg := figureConfig()
	cfg.Paths = 1
	s := newSim(t, 8, senders+1, cfg)
	half := unitDelay / 2
	bottleneck := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20})
	in := make([]metaroce.ConnID, senders+1)
	out := make([]metaroce.ConnID, senders+1)
	for i := 1; i <= senders; i++ {
		s.path(i, 0, 0, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20}), bottleneck)
		s.path(0, i, 0, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay}))
		out[i], in[i] = s.connect(i, 0)
	}
	t0 := s.fab.Now()
	for i := 1; i <= senders; i++ {
		for m := range 12 {
			require.NoError(t, s.eps[0].PostRecv(t0, in[i], 1, uint64(m), make([]byte, 256<<10)))
			require.NoError(t, s.eps[i].Send(t0, out[i], 1, uint64(m), fill(256<<10, byte(m))))
		}
	}
	s.runTo(t0 + 3*time.Millisecond)
	before := make([]float64, senders)
	for i := range before {
		before[i] = float64(s.arrived(0, in[i+1]))
	}
	s.runTo(t0 + 8*time.Millisecond)
	rates := make([]float64, senders)
	for i := range rates {
		rates[i] = (float64(s.arrived(0, in[i+1])) - before[i]) / (5 * time.Millisecond).Seconds()
	}
	measured := s.eps[0].Stats().RecvCapacity
	cs, _ := s.pathStats(1, out[1])
	st := s.fab.Stats().Links[bottleneck]
	t.Logf("measured capacity %s (bottleneck %s); sender 1 told %s; Jain %.4f over 3-8 ms; bottleneck drops %d of %d",
		gbps(float64(measured)), gbps(unitRate), gbps(float64(cs.PeerRate)), jain(rates), st.Dropped().Packets, st.Sent.Packets)
	require.InDelta(t, unitRate, float64(measured), 0.05*unitRate)
	require.InDelta(t, float64(measured)/senders, float64(cs.PeerRate), 0.1*float64(measured)/senders)
	require.GreaterOrEqual(t, jain(rates), 0.95)
	require.Zero(t, st.Dropped().Packets)
}
