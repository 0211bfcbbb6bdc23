package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestLANShareWithLossBased: TestTCPShare on a short path (review B16 F5's
// guard). One MetaRoCE connection of 8 paths and a loss-based flow
// (renoFlow, reading on time as a kernel's TCP does) share one 1 Gbit/s
// link of 5 us each way, queue 2 ms; without and with MetaRoCE's reads
// late by up to 500 us (a busy host's, which scatter a short path's
// samples as much as the competitor's queue does). Max-min fair is half
// each; each must have at least 30 % of the link. A connection whose 8
// paths grow uncoupled on a short path's scatter (4e85e29, reverted by
// df6af22) took 92-95 % and left the loss-based flow 4-7 %; coupled,
// 43/56 % and 37/62 %.
func TestLANShareWithLossBased(t *testing.T) {
	const rate = 125_000_000
	us := time.Microsecond
	for _, late := range []bool{false, true} {
		s := newSim(t, lateSeed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000, UnexpectedBytes: 64 << 20})
		cfg := simfabric.LinkConfig{Rate: rate, Delay: 5 * us, QueueBytes: queueOf(rate, 2*time.Millisecond)}
		fwd, rev := s.link(cfg), s.link(cfg)
		for i := range 8 {
			s.path(0, 1, i, fwd)
			s.path(1, 0, i, rev)
		}
		ca, cb := s.connect(0, 1)
		if late {
			s.rx = newLateReader(lateSeed, 500*us, true)
		}
		t0 := s.fab.Now()
		startFlow(s, 0, 1, ca, cb, 1<<20, 32)
		f := startReno(s, 9000, []simfabric.LinkID{fwd}, []simfabric.LinkID{rev})
		settle, measure := time.Second, 2*time.Second
		s.runTo(t0 + settle)
		mr0, tcp0 := s.arrived(1, cb), f.delivered
		s.runTo(t0 + settle + measure)
		mr := float64(s.arrived(1, cb)-mr0) / measure.Seconds()
		tcp := float64(f.delivered-tcp0) / measure.Seconds()
		_, ps := s.pathStats(0, ca)
		_, _, per := pathSummary(ps)
		t.Logf("late reads %v: MetaRoCE %.0f Mbit/s (%.0f %% of the link), loss-based flow %.0f (%.0f %%); tcp cuts %d timeouts %d; %s",
			late, mr*8/1e6, 100*mr/rate, tcp*8/1e6, 100*tcp/rate, f.cuts, f.timeouts, per)
		if mr < 0.3*rate || tcp < 0.3*rate {
			t.Errorf("late reads %v: MetaRoCE %.0f %%, loss-based %.0f %% of the link: not near half each", late, 100*mr/rate, 100*tcp/rate)
		}
	}
}
