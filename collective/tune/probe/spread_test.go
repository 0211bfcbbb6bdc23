package probe_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
)

// The spread pairs are the WAN level's other pairs (LevelPairs' order), at
// most two, never the measuring pair; no other level has any.
func TestSpreadPairs(t *testing.T) {
	for _, c := range []struct {
		name string
		topo topology.Topology
		want [3][][2]int
	}{
		{"2 sites x 2 hosts x 2 ranks (the lab)", grid(t, 2, 2, 2), [3][][2]int{nil, nil, {{1, 5}, {2, 6}}}},
		{"2 sites x 1 host x 2 ranks", grid(t, 2, 1, 2), [3][][2]int{nil, nil, {{1, 3}}}},
		{"2 sites x 1 host x 1 rank", grid(t, 2, 1, 1), [3][][2]int{}},
		{"1 site x 4 hosts x 2 ranks", grid(t, 1, 4, 2), [3][][2]int{}},
		{"3 sites x 1 host x 1 rank", grid(t, 3, 1, 1), [3][][2]int{}},
		{"4 sites x 1 host x 1 rank", grid(t, 4, 1, 1), [3][][2]int{nil, nil, {{2, 3}}}},
		// Cyclic placement: the measuring pair is the site leaders (0, 1).
		{"cyclic 2 sites", layout(t, [][2]string{{"a", "x"}, {"c", "y"}, {"a", "x"}, {"c", "y"}, {"b", "x"}, {"d", "y"}}), [3][][2]int{nil, nil, {{2, 3}, {4, 5}}}},
	} {
		var got [3][][2]int
		for l := range 3 {
			got[l] = probe.SpreadPairs(c.topo, l)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: spread pairs %v, want %v (measuring pairs %v)", c.name, got, c.want, probe.Pairs(c.topo))
		}
	}
}

// TestMeasureSpreadPairs: the WAN level's bandwidth is the best of its
// pairs', not the measuring pair's alone. On 2 sites x 2 hosts x 1 rank
// with an uplink of 50 MB/s, the measuring pair's hosts (s0h0, s1h0)
// carry only 25 MB/s between them, as a MetaRoCE connection whose ports
// hash onto 2 of the lab's 4 WAN links; the other pair's connection gets
// the uplink. The probe gives 50 MB/s (the measuring pair alone, as
// before the spread pairs: 25 MB/s; the contended round's 50 is 2x that,
// taken for lanes), its latency still the measuring pair's, the same on
// every rank.
func TestMeasureSpreadPairs(t *testing.T) {
	topo := grid(t, 2, 2, 1)
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 2 * time.Millisecond, Bandwidth: 50e6}
	links.Pairs = []topology.HostLink{{A: "s0h0", B: "s1h0", Link: topology.Link{Latency: 2 * time.Millisecond, Bandwidth: 25e6}}}
	got := measure(t, topo, links)
	for r := range got {
		if !reflect.DeepEqual(got[r], got[0]) {
			t.Fatalf("rank %d measured %+v, rank 0 %+v", r, got[r], got[0])
		}
	}
	wan := got[0].WAN
	if wan == nil {
		t.Fatal("no WAN figures")
	}
	t.Logf("WAN %v one way, %.4g B/s (uplink %.4g, the measuring pair's %.4g)", wan.Latency, wan.Bandwidth, links.WAN.Bandwidth, links.Pairs[0].Bandwidth)
	if r := wan.Bandwidth / links.WAN.Bandwidth; math.Abs(r-1) > 0.05 {
		t.Errorf("WAN bandwidth %.4g B/s, want the uplink's %.4g ± 5 %% (the best pair's)", wan.Bandwidth, links.WAN.Bandwidth)
	}
	if d := wan.Latency - links.WAN.Latency; d < 0 || d > 50*time.Microsecond {
		t.Errorf("WAN latency %v, want %v", wan.Latency, links.WAN.Latency)
	}
}

// The spread pairs' turns end on every layout: on 30 random layouts (2-12
// ranks, up to 6 hosts on up to 3 sites, ranks not numbered site by site;
// every other one multipath, so one spread pair and the second barrier)
// the probe returns on every rank (a turn waiting for a token no rank sends
// would hold it until the test's deadline) with the same figures, and a
// WAN level with spread pairs measures at least its uplink's bandwidth and
// at most 15 % above it.
func TestMeasureSpreadRandomLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: time.Millisecond, Bandwidth: 50e6}
	for i := range 30 {
		topo := randomLayout(t, rng, 2+rng.IntN(11), 1+rng.IntN(6), 1+rng.IntN(3))
		multipath := i%2 == 1
		got := measureWith(t, topo, links, func(_ int, now func() time.Duration) probe.Options {
			return probe.Options{Now: now, BulkBytes: 1 << 20, Multipath: [3]bool{false, multipath, multipath}}
		})
		for r := range got {
			if !reflect.DeepEqual(got[r], got[0]) {
				t.Fatalf("layout %d (multipath %v): rank %d measured %+v, rank 0 %+v", i, multipath, r, got[r], got[0])
			}
		}
		// A multipath level takes the round's aggregate however far above
		// the lone transfers: never far above the uplink.
		if w := got[0].WAN; w != nil && w.Bandwidth > 1.15*links.WAN.Bandwidth {
			t.Errorf("layout %d (multipath %v): WAN %.4g B/s, want at most %.4g + 15 %%", i, multipath, w.Bandwidth, links.WAN.Bandwidth)
		}
		// Not above: the contended round (contend.go) puts the WAN 10 % above
		// the uplink on 2 of these layouts (15 and 28: 3 sites, two pairs
		// leaving one), with or without the spread pairs: on layout 15 its
		// span is 11.49 ms, less a 2 ms round trip, for 2 x 256 KiB that
		// need 10.49 ms at 50 MB/s, 1 ms (a WAN latency) short; why is not
		// found (the barrier's skew is one guess).
		if w := got[0].WAN; w != nil && len(probe.SpreadPairs(topo, 2)) > 0 && w.Bandwidth < 0.95*links.WAN.Bandwidth {
			t.Errorf("layout %d (spread pairs %v): WAN %.4g B/s, want at least %.4g - 5 %%", i, probe.SpreadPairs(topo, 2), w.Bandwidth, links.WAN.Bandwidth)
		}
	}
}
