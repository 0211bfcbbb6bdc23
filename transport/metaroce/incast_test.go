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

// incastNet connects nodes 1..senders to node 0: each sender has its own
// 10 Gb/s uplink, and all share one 10 Gb/s bottleneck link into node 0
// with a 4 MiB queue; ACKs come back on links of their own. It returns the
// bottleneck and the connection ids at the receiver and at the senders,
// indexed by sender.
func incastNet(s *sim, senders int) (simfabric.LinkID, []metaroce.ConnID, []metaroce.ConnID) {
	half := unitDelay / 2
	bottleneck := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20})
	in := make([]metaroce.ConnID, senders+1)
	out := make([]metaroce.ConnID, senders+1)
	for i := 1; i <= senders; i++ {
		up := s.link(simfabric.LinkConfig{Rate: unitRate, Delay: half, QueueBytes: 4 << 20})
		s.path(i, 0, 0, up, bottleneck)
		s.path(0, i, 0, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: unitDelay}))
		out[i], in[i] = s.connect(i, 0)
	}
	return bottleneck, in, out
}

// incastRun is a running incast: the simulation, its connections, and a
// way to start a sender's transfer (12 messages of 256 KiB).
type incastRun struct {
	s          *sim
	in, out    []metaroce.ConnID
	bottleneck simfabric.LinkID
}

func (r *incastRun) start(sender int) {
	at := r.s.fab.Now()
	for m := range 12 {
		require.NoError(r.s.t, r.s.eps[0].PostRecv(at, r.in[sender], 1, uint64(m), make([]byte, 256<<10)))
		require.NoError(r.s.t, r.s.eps[sender].Send(at, r.out[sender], 1, uint64(m), fill(256<<10, byte(m))))
	}
}

// rates returns each of senders 1..n's arrival rate at the receiver over
// the next d.
func (r *incastRun) rates(n int, d time.Duration) []float64 {
	before := make([]float64, n)
	for i := range before {
		before[i] = float64(r.s.arrived(0, r.in[i+1]))
	}
	r.s.runTo(r.s.fab.Now() + d)
	rates := make([]float64, n)
	for i := range rates {
		rates[i] = (float64(r.s.arrived(0, r.in[i+1])) - before[i]) / d.Seconds()
	}
	return rates
}

// TestFigureIncast runs 16 senders into one receiver behind one bottleneck
// link: no loss, a bounded queue, a fair split. Then a 17th joins and must
// be at its share within two round trips.
func TestFigureIncast(t *testing.T) {
	const senders = 16
	cfg := figureConfig()
	cfg.Paths = 1
	cfg.RecvCapacity = unitRate
	s := newSim(t, 7, senders+2, cfg)
	r := &incastRun{s: s}
	r.bottleneck, r.in, r.out = incastNet(s, senders+1)
	for i := 1; i <= senders; i++ {
		r.start(i)
	}
	s.runTo(s.fab.Now() + 4*time.Millisecond)
	rates := r.rates(senders, 8*time.Millisecond)
	total := 0.0
	for _, x := range rates {
		total += x
	}
	// The standing queue once settled shows in every sender's smoothed RTT.
	var queueDelay time.Duration
	for i := 1; i <= senders; i++ {
		_, ps := s.pathStats(i, r.out[i])
		queueDelay = max(queueDelay, ps[0].SRTT-ps[0].MinRTT)
	}
	st := s.fab.Stats().Links[r.bottleneck]
	loss := float64(st.Dropped().Packets) / float64(st.Sent.Packets)
	t.Logf("incast %d->1: aggregate %s (%.1f%% of the bottleneck), Jain %.4f over 4-12 ms, bottleneck loss %.4f%% (%d of %d), max queue %d KiB",
		senders, gbps(total), 100*total/unitRate, jain(rates), 100*loss, st.Dropped().Packets, st.Sent.Packets, st.MaxQueueBytes>>10)
	t.Logf("settled standing queue: at most %v of delay (%d KiB at the bottleneck rate)",
		queueDelay, int64(queueDelay.Seconds()*unitRate)>>10)
	require.Less(t, loss, 0.001)
	require.GreaterOrEqual(t, jain(rates), 0.95)
	require.Greater(t, total, 0.9*unitRate)
	require.LessOrEqual(t, st.MaxQueueBytes, senders*cfg.MaxDatagram*16+cfg.MaxDatagram, "more than the initial windows")
	require.Less(t, queueDelay, 100*time.Microsecond)
	joinIncast(t, r, senders+1)
}

// joinIncast starts one more sender and checks that it learns its share
// and runs at it within two round trips.
func joinIncast(t *testing.T, r *incastRun, joiner int) {
	s := r.s
	join := s.fab.Now()
	r.start(joiner)
	var series []sample
	told := time.Duration(-1)
	s.runUntil(join+5*time.Millisecond, func() bool {
		series = append(series, sample{s.fab.Now(), s.arrived(0, r.in[joiner])})
		if cs, _ := s.pathStats(joiner, r.out[joiner]); told < 0 && cs.PeerRate > 0 {
			told = s.fab.Now() - join
		}
		return s.fab.Now() >= join+2*time.Millisecond
	})
	cs, ps := s.pathStats(joiner, r.out[joiner])
	rtt := ps[0].MinRTT
	share := float64(unitRate) / float64(joiner)
	newRate := rateBetween(series, join+2*rtt, join+6*rtt)
	t.Logf("joiner: base RTT %v, first told its rate %v (%.1f RTT) after starting; told %s (share %s); "+
		"arrival rate over RTT 2-6 after starting %s = %.0f%% of its share",
		rtt, told, float64(told)/float64(rtt), gbps(float64(cs.PeerRate)), gbps(share), gbps(newRate), 100*newRate/share)
	require.Positive(t, told)
	require.LessOrEqual(t, told, 2*rtt, "share known within two round trips")
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
	bottleneck, in, out := incastNet(s, senders)
	r := &incastRun{s: s, in: in, out: out, bottleneck: bottleneck}
	for i := 1; i <= senders; i++ {
		r.start(i)
	}
	s.runTo(s.fab.Now() + 3*time.Millisecond)
	rates := r.rates(senders, 5*time.Millisecond)
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
