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
// latecomer has had settle to find its share.
func runIncastShallow(t *testing.T, seed int64, senders int, late, settle, measure time.Duration) incastResult {
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
		r := runIncastShallow(t, seed, 6, 2*time.Second, 2*time.Second, 6*time.Second)
		t.Logf("seed %d: %v", seed, r)
		capacity := float64(2 * labRate)
		if r.total < 0.9*capacity || r.jain < 0.9 || r.drops >= 0.01 {
			t.Errorf("incast with a latecomer: total %.1f%% (want >= 90%%), Jain %.3f (want >= 0.9), drops %.2f%% (want < 1%%) (seed %d)",
				100*r.total/capacity, r.jain, 100*r.drops, seed)
		}
	}
}
