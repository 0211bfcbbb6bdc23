package probe_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/simnet"
)

func grid(t testing.TB, sites, hosts, ranks int) topology.Topology {
	var rs []topology.RankInfo
	for s := range sites {
		for h := range hosts {
			for l := range ranks {
				rs = append(rs, topology.RankInfo{Rank: len(rs), Host: fmt.Sprintf("s%dh%d", s, h), Site: fmt.Sprintf("s%d", s), LocalRank: l})
			}
		}
	}
	tp, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// measure runs the probe on every rank of a simulated world, in its
// virtual time, and returns each rank's figures.
func measure(t *testing.T, topo topology.Topology, links tune.Links) []topology.Links {
	t.Helper()
	return measureWith(t, topo, links, func(_ int, now func() time.Duration) probe.Options { return probe.Options{Now: now} })
}

// measureWith is measure with rank r's options opts(r, the world's clock).
func measureWith(t *testing.T, topo topology.Topology, links tune.Links, opts func(r int, now func() time.Duration) probe.Options) []topology.Links {
	t.Helper()
	return measureOn(t, topo, links, nil, opts)
}

// measureScripted probes a world of two ranks on two sites in which rank
// 0, the measuring end, reads its clock as steps script it (each call of
// Now advances it by the next step, then by 1 ms a call once they run
// out) and rank 1 reads the world's clock.
func measureScripted(t *testing.T, steps []time.Duration) []topology.Links {
	t.Helper()
	var now time.Duration
	clock := func() time.Duration {
		if len(steps) > 0 {
			now += steps[0]
			steps = steps[1:]
		} else {
			now += time.Millisecond
		}
		return now
	}
	return measureWith(t, grid(t, 2, 1, 1), tune.DefaultLinks(), func(r int, worldNow func() time.Duration) probe.Options {
		if r == 0 {
			return probe.Options{Now: clock, PingBudget: -1}
		}
		return probe.Options{Now: worldNow, PingBudget: -1}
	})
}

// measureOn is measureWith whose rank r runs over wrap(r, its endpoint)
// where wrap is not nil.
func measureOn(t *testing.T, topo topology.Topology, links tune.Links, wrap func(r int, ep transport.Endpoint) transport.Endpoint, opts func(r int, now func() time.Duration) probe.Options) []topology.Links {
	t.Helper()
	got := make([]topology.Links, topo.Size())
	onWorld(t, topo, links, wrap, func(ctx context.Context, c *collective.Comm, now func() time.Duration) error {
		var err error
		got[c.Rank()], err = probe.Measure(ctx, c, topo, opts(c.Rank(), now))
		return err
	})
	return got
}

// onWorld runs run on every rank of a simulated world of topo and links,
// each on a communicator over its endpoint (wrap(r, it) where wrap is not
// nil), with the world's clock, and fails t with each rank's error.
func onWorld(t *testing.T, topo topology.Topology, links tune.Links, wrap func(r int, ep transport.Endpoint) transport.Endpoint, run func(ctx context.Context, c *collective.Comm, now func() time.Duration) error) {
	t.Helper()
	w, err := simnet.NewWorld(topo, links)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for r, ep := range w.Endpoints() {
		if wrap != nil {
			ep = wrap(r, ep)
		}
		wg.Go(func() {
			defer ep.Close()
			c, err := collective.New(ep, 1, collective.Config{Topology: &topo})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := run(ctx, c, w.Now); err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		})
	}
	wg.Wait()
}

// On the simulated fabric, the probe finds each level's latency and
// bandwidth, and every rank gets the very same figures.
func TestMeasureFindsTheFabric(t *testing.T) {
	links := tune.Links{
		Host: tune.Link{Latency: 3 * time.Microsecond, Bandwidth: 5e9},
		Site: tune.Link{Latency: 40 * time.Microsecond, Bandwidth: 1.25e9},
		WAN:  tune.Link{Latency: 7 * time.Millisecond, Bandwidth: 50e6},
	}
	topo := grid(t, 2, 2, 2)
	got := measure(t, topo, links)
	for r := range got {
		if !reflect.DeepEqual(got[r], got[0]) {
			t.Fatalf("rank %d measured %+v, rank 0 %+v", r, got[r], got[0])
		}
	}
	for _, c := range []struct {
		name      string
		got       *topology.Link
		want      tune.Link
		latSlack  time.Duration
		bandSlack float64
	}{{"host", got[0].Host, links.Host, time.Microsecond, 0.1}, {"site", got[0].Site, links.Site, 2 * time.Microsecond, 0.1}, {"wan", got[0].WAN, links.WAN, 50 * time.Microsecond, 0.1}} {
		if c.got == nil {
			t.Errorf("%s: no figures", c.name)
			continue
		}
		t.Logf("%s: measured %v, %.4g B/s; fabric %v, %.4g B/s", c.name, c.got.Latency, c.got.Bandwidth, c.want.Latency, c.want.Bandwidth)
		if d := c.got.Latency - c.want.Latency; d < -c.latSlack || d > c.latSlack {
			t.Errorf("%s: latency %v, want %v ± %v", c.name, c.got.Latency, c.want.Latency, c.latSlack)
		}
		if r := c.got.Bandwidth / c.want.Bandwidth; math.Abs(r-1) > c.bandSlack {
			t.Errorf("%s: bandwidth %.4g, want %.4g ± %.0f %%", c.name, c.got.Bandwidth, c.want.Bandwidth, 100*c.bandSlack)
		}
	}
}

// A level without a pair gets no figures.
func TestMeasureMissingLevels(t *testing.T) {
	got := measure(t, grid(t, 1, 3, 1), tune.DefaultLinks())
	if got[0].Host != nil || got[0].WAN != nil || got[0].Site == nil {
		t.Errorf("one site of three one-rank hosts: %+v, want only the site level", got[0])
	}
	if p := probe.Pairs(grid(t, 3, 2, 2)); p != [3][2]int{{0, 1}, {0, 2}, {0, 4}} {
		t.Errorf("pairs %v", p)
	}
}

// TestMeasureMedianLatency: the latency is half the median round trip, not
// the fastest: of round trips of 2, 8, 8, 2 and 8 ms (on the measuring
// rank's scripted clock), 4 ms, where the fastest would say 1 ms; the
// bandwidth is the fastest bulk transfer's less the fastest round trip (a
// transfer is only slowed below the link's).
func TestMeasureMedianLatency(t *testing.T) {
	ms := time.Millisecond
	// rank 0's calls of Now: begin; per round trip its start and end
	// (and before the fifth's start, the budget's check); the bulk's
	// start and end.
	steps := []time.Duration{0, 0, 2 * ms, 0, 8 * ms, 0, 8 * ms, 0, 2 * ms, 0, 0, 8 * ms, 0, 108 * ms, 0, 48 * ms, 0, 508 * ms}
	got := measureScripted(t, steps)
	if got[0].WAN == nil || got[0].WAN.Latency != 4*ms {
		t.Fatalf("WAN figures %+v, want a latency of 4ms (half the median round trip)", got[0].WAN)
	}
	// The bulk transfers took 108, 48 and 508 ms: the fastest less the
	// fastest round trip, 46 ms, for BulkBytes.
	if want := float64(4<<20) / 0.046; math.Abs(got[0].WAN.Bandwidth/want-1) > 1e-9 {
		t.Errorf("WAN bandwidth %.6g B/s, want %.6g (the fastest of three bulk transfers)", got[0].WAN.Bandwidth, want)
	}
}

// The CPU figures: with each end's CPU time half the world's virtual time
// (a process that burns half a core whatever it does), a transfer's bytes
// cost both ends together one over the bandwidth each, and a message
// nothing beyond the waiting: simnet moves a burst's sends to one peer one
// after another, as slow a message as a ping-pong's, so the message's CPU
// cannot be told from the wait and stays unknown (cpuCosts' own test
// covers the fit).
// Every rank gets the same figures; a probe in virtual time without a CPU
// clock measures none.
func TestMeasureCPU(t *testing.T) {
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6}
	topo := grid(t, 2, 1, 1)
	got := measureWith(t, topo, links, func(_ int, now func() time.Duration) probe.Options {
		return probe.Options{Now: now, CPUTime: func() time.Duration { return now() / 2 }}
	})
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("rank 1 measured %+v, rank 0 %+v", got[1], got[0])
	}
	wan := got[0].WAN
	if wan == nil {
		t.Fatal("no WAN figures")
	}
	t.Logf("CPU a byte %.4g s, a message %v", wan.CPUPerByte, wan.CPUPerMessage)
	if want := 1 / links.WAN.Bandwidth; math.Abs(wan.CPUPerByte/want-1) > 0.05 {
		t.Errorf("CPU a byte %.4g s, want %.4g ± 5 %%", wan.CPUPerByte, want)
	}
	if wan.CPUPerMessage != 0 {
		t.Errorf("CPU a message %v: the round trip's waiting (%v one way) taken for a message's", wan.CPUPerMessage, links.WAN.Latency)
	}
	plain := measure(t, topo, links)
	if plain[0].WAN == nil || plain[0].WAN.CPUPerByte != 0 || plain[0].WAN.CPUPerMessage != 0 {
		t.Errorf("virtual time without a CPU clock: %+v, want no CPU figures", plain[0].WAN)
	}
}
