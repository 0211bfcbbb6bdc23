package probe_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/simnet"
)

// Every rank gets the same figures, and so makes the same choice, even
// when the ranks' own clocks disagree: rank r's clock runs 1 + r/4 times
// as fast as virtual time, so each end of a measuring pair would time a
// different latency and bandwidth; the figures are the pairs' first
// ranks' (rank 0 at every level of 2 x 2 x 2, whose clock is true), on
// every rank, and the model's AllReduce choice from them is the same on
// every rank at 8 B, 4 MiB and 64 MiB.
func TestEveryRankAgreesWhenClocksDiffer(t *testing.T) {
	links := tune.Links{
		Host: tune.Link{Latency: 3 * time.Microsecond, Bandwidth: 5e9},
		Site: tune.Link{Latency: 40 * time.Microsecond, Bandwidth: 1.25e9},
		WAN:  tune.Link{Latency: 7 * time.Millisecond, Bandwidth: 50e6},
	}
	topo := grid(t, 2, 2, 2)
	w, err := simnet.NewWorld(topo, links)
	if err != nil {
		t.Fatal(err)
	}
	eps := w.Endpoints()
	got := make([]topology.Links, len(eps))
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			defer ep.Close()
			c, err := collective.New(ep, 1, collective.Config{Topology: &topo})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rate := 1 + float64(r)/4
			now := func() time.Duration { return time.Duration(float64(w.Now()) * rate) }
			if got[r], err = probe.Measure(ctx, c, topo, probe.Options{Now: now}); err != nil {
				t.Errorf("rank %d: %v", r, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if got[0].Host == nil || got[0].Site == nil || got[0].WAN == nil {
		t.Fatalf("rank 0 measured %+v, want every level", got[0])
	}
	if d := got[0].WAN.Latency - links.WAN.Latency; d < -50*time.Microsecond || d > 50*time.Microsecond {
		t.Errorf("WAN latency %v, want the true clock's %v (the first rank of the pair)", got[0].WAN.Latency, links.WAN.Latency)
	}
	for r := range got {
		if !reflect.DeepEqual(got[r], got[0]) {
			t.Errorf("rank %d measured %+v, rank 0 %+v", r, got[r], got[0])
		}
	}
	for _, bytes := range []int{8, 4 << 20, 64 << 20} {
		var first string
		for r := range got {
			tp := topo
			tp.Links = &got[r]
			p, err := tune.Choose(tune.AllReduce, tune.Input{Topology: tp, Bytes: bytes, ChunkBytes: 1 << 19, Links: tune.DefaultLinks()})
			if err != nil {
				t.Fatalf("rank %d, %d B: %v", r, bytes, err)
			}
			if r == 0 {
				first = p.Algorithm
			} else if p.Algorithm != first {
				t.Errorf("%d B: rank %d chose %s, rank 0 %s", bytes, r, p.Algorithm, first)
			}
		}
		t.Logf("%d B: every rank chose %s", bytes, first)
	}
}
