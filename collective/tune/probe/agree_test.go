package probe_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
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
	got := measureWith(t, topo, links, func(r int, worldNow func() time.Duration) probe.Options {
		rate := 1 + float64(r)/4
		return probe.Options{Now: func() time.Duration { return time.Duration(float64(worldNow()) * rate) }}
	})
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
	requireSameChoice(t, topo, got, 8, 4<<20, 64<<20)
}

// requireSameChoice checks that each rank's figures (got, by rank) give
// the same AllReduce choice at each of sizes.
func requireSameChoice(t *testing.T, topo topology.Topology, got []topology.Links, sizes ...int) {
	t.Helper()
	for _, bytes := range sizes {
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
