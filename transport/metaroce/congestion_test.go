package metaroce_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// incastResult is what a shallow-buffer incast delivered over its
// measured interval.
type incastResult struct {
	total, jain, drops float64 // bytes/s; Jain's index; dropped over offered packets
	rates              []float64
	dropped, offered   int64
	detail             string
}

func (r incastResult) String() string {
	each := make([]string, len(r.rates))
	for i, x := range r.rates {
		each[i] = fmt.Sprintf("%.0f", x*8/1e6)
	}
	return fmt.Sprintf("total %.0f Mbit/s (%s), Jain %.3f, drops %.2f%% (%d of %d)%s",
		r.total*8/1e6, strings.Join(each, "/"), r.jain, 100*r.drops, r.dropped, r.offered, r.detail)
}

// runIncastShallow runs the lab's incast (as TestFigureIncastShallow:
// senders to their own endpoints, 8 paths each, one 400 Mbit/s link of 2
// ms one way with a 20 ms queue). The last sender connects and starts
// late after the others, when their traffic already fills the queue (0:
// all at once), so that its handshake and first samples see the queue as
// the path's base. Goodputs and drops are measured over measure after the
// latecomer has had settle to find its share. The first senders start
// gap apart (0: all at once).
func runIncastShallow(t *testing.T, seed int64, senders int, gap, late, settle, measure time.Duration) incastResult {
	rate := int64(2 * labRate)
	cfg := metaroce.Config{Paths: 8, MaxDatagram: 9000}
	s := newSim(t, seed, 2*senders, cfg)
	bottleneck := s.link(simfabric.LinkConfig{Rate: rate, Delay: 2 * time.Millisecond, QueueBytes: queueOf(rate, shallowQueue)})
	for i := range senders {
		a, b := i, senders+i
		up := s.link(simfabric.LinkConfig{Rate: unitRate, QueueBytes: 4 << 20})
		for idx := range cfg.Paths {
			s.path(a, b, idx, up, bottleneck)
			s.path(b, a, idx, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: 2 * time.Millisecond}))
		}
	}
	ca := make([]metaroce.ConnID, senders)
	cb := make([]metaroce.ConnID, senders)
	open := func(i int) {
		ca[i], cb[i] = s.connect(i, senders+i)
		startFlow(s, i, senders+i, ca[i], cb[i], 1<<20, 16)
	}
	t0 := s.fab.Now()
	for i := range senders - 1 {
		if i > 0 {
			s.runTo(s.fab.Now() + gap)
		}
		open(i)
	}
	s.runTo(t0 + late)
	open(senders - 1)
	s.runTo(s.fab.Now() + settle)
	before := make([]int64, senders)
	for i := range senders {
		before[i] = s.arrived(senders+i, cb[i])
	}
	st0 := s.fab.Stats().Links[bottleneck]
	s.runTo(s.fab.Now() + measure)
	st := s.fab.Stats().Links[bottleneck]
	r := incastResult{rates: make([]float64, senders)}
	for i := range senders {
		r.rates[i] = float64(s.arrived(senders+i, cb[i])-before[i]) / measure.Seconds()
		r.total += r.rates[i]
	}
	r.jain = jain(r.rates)
	r.dropped = st.Dropped().Packets - st0.Dropped().Packets
	r.offered = st.Sent.Packets - st0.Sent.Packets
	r.drops = float64(r.dropped) / float64(max(r.offered, 1))
	for i := range senders {
		_, ps := s.pathStats(i, ca[i])
		_, _, per := pathSummary(ps)
		r.detail += fmt.Sprintf("\n sender %d:%s", i, per)
	}
	return r
}

// TestIncastLatecomer: 5 senders fill the lab's shallow bottleneck, a
// sixth connects 2 s later (its handshake and first RTT samples through
// the full queue, so that it takes the queue for its path's base) and all
// must share: total >= 90 %, Jain >= 0.9, drops < 1 % of the packets
// offered, from 2 s after it joined for 6 s.
func TestIncastLatecomer(t *testing.T) {
	for _, seed := range []int64{1500} {
		r := runIncastShallow(t, seed, 6, 0, 2*time.Second, 2*time.Second, 6*time.Second)
		t.Logf("seed %d: %v", seed, r)
		capacity := float64(2 * labRate)
		if r.total < 0.9*capacity || r.jain < 0.9 || r.drops >= 0.01 {
			t.Errorf("incast with a latecomer: total %.1f%% (want >= 90%%), Jain %.3f (want >= 0.9), drops %.2f%% (want < 1%%) (seed %d)",
				100*r.total/capacity, r.jain, 100*r.drops, seed)
		}
	}
}

// TestIncastStaggered: the lab's incast as its launcher starts it, the
// senders 150 ms apart, so that each one's slow start and first samples
// meet the queue the earlier ones built, and most take part of it for
// their base RTT: without a drain (drain.go) they kept the 20 ms buffer
// full (srtt 23 ms against a base of 4.2) and lost 4 % of their packets
// over 20 s (seed 1400), as the lab's row does (3.8 %); this seed gave
// drops 0.84 % and Jain 0.79. Measured from 1 s after the last start for
// 8 s: total >= 90 %, Jain >= 0.9, drops < 1 %. (The slow starts into the
// queue the earlier senders built still overflow it before the first
// drain: from the last start, without the settling second, this seed
// drops 1.08 %, nearly all in that second; 1.62 % without drains.)
//
// Also at gaps of 160-200 ms (staggeredGaps; under -short 160 and 170
// only), where the drops are judged together: none at 2 % or more, and
// (all gaps) a mean under 1 %. The outcome at one
// gap turns on the timing of drains and losses (over gaps of 100-250 ms
// by 5, 12 of 31 dropped 1 % or more on main as of session 27, 11 with
// the steady heavy loss of lossRounds); what the gaps show together is
// the latecomer that took the full queue for its base RTT and grew into
// the buffer while losing 15-25 % of its packets, which two rounds' third
// (heavyLossDen) missed: at 160 ms it dropped 3.39 % (gaps 150-200 by 10:
// mean 1.47 %, max 3.39), with the steady rule 1.33 % (mean 0.79, max
// 1.33).
func TestIncastStaggered(t *testing.T) {
	const seed = 1510
	capacity := float64(2 * labRate)
	var sum float64
	gaps := staggeredGaps()
	for _, ms := range gaps {
		gap := time.Duration(ms) * time.Millisecond
		r := runIncastShallow(t, seed, 6, gap, gap, time.Second, 8*time.Second)
		t.Logf("gap %v seed %d: %v", gap, seed, r)
		sum += r.drops
		limit := 0.02
		if ms == 150 {
			limit = 0.01
		}
		if r.total < 0.9*capacity || r.jain < 0.9 || r.drops >= limit {
			t.Errorf("staggered incast, gap %v: total %.1f%% (want >= 90%%), Jain %.3f (want >= 0.9), drops %.2f%% (want < %.0f%%) (seed %d)",
				gap, 100*r.total/capacity, r.jain, 100*r.drops, 100*limit, seed)
		}
	}
	if mean := sum / float64(len(gaps)); !testing.Short() && mean >= 0.01 {
		t.Errorf("staggered incast: drops %.2f%% on average over gaps %v ms, want < 1%% (seed %d)", 100*mean, gaps, seed)
	}
}

// staggeredGaps is TestIncastStaggered's gaps in ms: the launcher's 150,
// and 160-200 by 10 (160 and 170 under -short: each ~1 s of CPU).
func staggeredGaps() []int {
	if testing.Short() {
		return []int{150, 160, 170}
	}
	return []int{150, 160, 170, 180, 190, 200}
}

// shareResult is what a MetaRoCE connection and a loss-based flow sharing
// the lab's links delivered over the measured interval, in bytes/s.
type shareResult struct {
	mr, tcp float64
	detail  string
}

// runTCPShare runs the lab's tcp-share row: one MetaRoCE connection of 8
// paths over 4 links of 200 Mbit/s (2 paths a link), oneWay each way,
// queues of 20 ms of the rate, and a renoFlow over link 0 (tcp false: the
// connection alone). It measures from settle for measure.
func runTCPShare(t *testing.T, seed int64, oneWay time.Duration, tcp bool, settle, measure time.Duration) shareResult {
	s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000, UnexpectedBytes: 64 << 20})
	cfg := simfabric.LinkConfig{Rate: labRate, Delay: oneWay, QueueBytes: queueOf(labRate, shallowQueue)}
	fwd, rev := s.labLinks(cfg)
	ca, cb := s.connect(0, 1)
	t0 := s.fab.Now()
	startFlow(s, 0, 1, ca, cb, 1<<20, 32)
	var f *renoFlow
	if tcp {
		f = startReno(s, 9000, fwd[:1], rev[:1])
	}
	s.runTo(t0 + settle)
	mr0 := s.arrived(1, cb)
	var tcp0 int64
	if f != nil {
		tcp0 = f.delivered
	}
	s.runTo(t0 + settle + measure)
	r := shareResult{mr: float64(s.arrived(1, cb)-mr0) / measure.Seconds()}
	if f != nil {
		r.tcp = float64(f.delivered-tcp0) / measure.Seconds()
		r.detail = fmt.Sprintf("; tcp cuts %d timeouts %d cwnd %.0f srtt %v", f.cuts, f.timeouts, f.cwnd, f.srtt.Round(100*time.Microsecond))
	}
	_, ps := s.pathStats(0, ca)
	_, _, per := pathSummary(ps)
	r.detail += ";" + per
	return r
}

// TestTCPShare: one MetaRoCE connection over the lab's 4 links and a
// loss-based flow (renoFlow) on link 0. Max-min fair is half of link 0
// to the flow (100 Mbit/s) and the rest to MetaRoCE (700); each must be
// within 20 % of its share, from 4 s for 8 s. The flow alone on its link
// must fill it (>= 90 %), or the competitor proves nothing.
func TestTCPShare(t *testing.T) {
	const seed = 1600
	ms := time.Millisecond
	{
		s := newSim(t, seed, 0, metaroce.Config{})
		cfg := simfabric.LinkConfig{Rate: labRate, Delay: 2 * ms, QueueBytes: queueOf(labRate, shallowQueue)}
		f := startReno(s, 9000, []simfabric.LinkID{s.link(cfg)}, []simfabric.LinkID{s.link(cfg)})
		s.runTo(4 * time.Second)
		d0 := f.delivered
		s.runTo(12 * time.Second)
		rate := float64(f.delivered-d0) / 8
		t.Logf("loss-based flow alone: %.0f Mbit/s of 200, cuts %d, timeouts %d", rate*8/1e6, f.cuts, f.timeouts)
		if rate < 0.9*labRate {
			t.Errorf("loss-based flow alone moved %.0f Mbit/s, want >= 180 (seed %d)", rate*8/1e6, seed)
		}
	}
	r := runTCPShare(t, seed, 2*ms, true, 4*time.Second, 8*time.Second)
	mrFair, tcpFair := 3.5*labRate, 0.5*labRate
	t.Logf("MetaRoCE %.0f Mbit/s (%.0f %% of a fair 700), loss-based flow %.0f (%.0f %% of a fair 100)%s",
		r.mr*8/1e6, 100*r.mr/mrFair, r.tcp*8/1e6, 100*r.tcp/tcpFair, r.detail)
	for _, c := range []struct {
		name      string
		got, fair float64
	}{{"MetaRoCE", r.mr, mrFair}, {"loss-based flow", r.tcp, tcpFair}} {
		if c.got < 0.8*c.fair || c.got > 1.2*c.fair {
			t.Errorf("%s: %.0f Mbit/s, not within 20 %% of its max-min fair %.0f (seed %d)", c.name, c.got*8/1e6, c.fair*8/1e6, seed)
		}
	}
}

// TestLongRTTShallowEightPaths runs the lab's long-RTT rows: one
// connection of 8 paths over 4 links of 200 Mbit/s (2 paths a link, as
// the lab hashes 8 ports onto 4 links) whose queues hold 20 ms of the
// rate, at 10 and 50 ms one way (20 and 100 ms RTT); from the settle time
// (slow start and the first cuts over) goodput must be >= 90 % of 800.
func TestLongRTTShallowEightPaths(t *testing.T) {
	ms := time.Millisecond
	for i, c := range []struct{ oneWay, settle time.Duration }{{10 * ms, 3 * time.Second}, {50 * ms, 6 * time.Second}} {
		seed := int64(1700 + i)
		r := runTCPShare(t, seed, c.oneWay, false, c.settle, 8*time.Second)
		share := r.mr / (4 * labRate)
		t.Logf("%v one way: %.1f %% of 800 Mbit/s;%s", c.oneWay, 100*share, r.detail)
		if share < 0.9 {
			t.Errorf("%v one way: goodput %.1f %% of capacity, want >= 90 %% (seed %d)", c.oneWay, 100*share, seed)
		}
	}
}

// labLinks gives s 4 links each way with cfg and rank 0's and rank 1's 8
// paths to each other over them, 2 a link, as the lab's ECMP hashes 8
// ports onto 4 links; it returns the links from 0 to 1 and back.
func (s *sim) labLinks(cfg simfabric.LinkConfig) (fwd, rev []simfabric.LinkID) {
	for range 4 {
		fwd, rev = append(fwd, s.link(cfg)), append(rev, s.link(cfg))
	}
	for i := range 8 {
		s.path(0, 1, i, fwd[i%4])
		s.path(1, 0, i, rev[i%4])
	}
	return fwd, rev
}
