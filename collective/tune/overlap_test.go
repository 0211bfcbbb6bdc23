package tune

import (
	"math"
	"testing"
	"time"
)

// TestOverlapTime: the closed network's time is max(a, b) with perfect
// overlap (n 0) and a + b with one customer; in between it falls with n,
// never under the max nor over the sum, comes to the max where one
// station dominates, and is (n+1)/n of the time where the two are equal.
func TestOverlapTime(t *testing.T) {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	for _, tc := range []struct {
		a, b float64
		n    int
		want float64
	}{
		{3, 2, 0, 3}, {2, 3, -1, 3}, {3, 2, 1, 5}, {0, 2, 4, 2}, {2, 0, 4, 2},
		{1, 1, 1, 2}, {1, 1, 2, 1.5}, {1, 1, 4, 1.25}, {5, 5, 8, 5 * 9.0 / 8},
	} {
		if got := overlapTime(tc.a, tc.b, tc.n); !near(got, tc.want) {
			t.Errorf("overlapTime(%v, %v, %d) = %v, want %v", tc.a, tc.b, tc.n, got, tc.want)
		}
	}
	for _, b := range []float64{0.01, 0.3, 0.8, 1, 1.25, 3, 100} {
		prev := math.Inf(1)
		for n := 1; n <= 64; n *= 2 {
			got := overlapTime(1, b, n)
			if got > prev || got < math.Max(1, b)-1e-12 || got > 1+b+1e-12 {
				t.Errorf("overlapTime(1, %v, %d) = %v: not in [max, sum] or rises with n (before %v)", b, n, got, prev)
			}
			prev = got
		}
	}
	if got := overlapTime(1, 0.01, 4); got > 1.0001 {
		t.Errorf("overlapTime(1, 0.01, 4) = %v: a small second station should leave the max", got)
	}
}

// TestTreeOverlapOnSharedCores: the lab's grid (2 sites × 2 hosts × 2
// ranks) with the AMD machine's CPU figures (a 256 MiB run's probe, the
// quiet window of session 29). On one machine of 2 cores the tree's links
// and roofline are close, and its time is more than either; on a machine
// of 64 cores a host, as without CPU figures. The term does not move the
// tree's channels.
func TestTreeOverlapOnSharedCores(t *testing.T) {
	links := DefaultLinks()
	links.Host.CPUPerByte, links.Host.CPUPerByteBusy, links.Host.CPUPerMessage = 0.671e-9, 0.357e-9, 9266*time.Nanosecond
	links.Site.CPUPerByte, links.Site.CPUPerByteBusy, links.Site.CPUPerMessage = 2.70e-9, 2.23e-9, 201919*time.Nanosecond
	links.WAN.CPUPerByte, links.WAN.CPUPerByteBusy, links.WAN.CPUPerMessage = 5.22e-9, 7.90e-9, 156109*time.Nanosecond
	links.WAN.Bandwidth = 96.8e6
	shared := onMachines(t, grid(t, 2, 2, 2), func(int) string { return "lab" }, 2)
	spread := onMachines(t, grid(t, 2, 2, 2), func(int) string { return "" }, 64)
	in := Input{Topology: shared, Bytes: 256 << 20, ChunkBytes: 2 << 20, Channels: 1, Links: links}
	m := newModel(in)
	ph, _ := m.treeChannels(1, -1, true, true)
	bound, sched := m.cpuTime(ph[0])
	lt := m.linkTime(ph[0]) + sched
	if bound < 0.8*lt || bound > lt {
		t.Fatalf("roofline %v, links %v: not close, the test's premise", bound, lt)
	}
	if n := m.feeders(ph[0]); n < 2 {
		t.Fatalf("feeders %d: want the flows through a WAN direction", n)
	}
	lab := predictAll(t, in)["tree"]
	t.Logf("links %.3fs, roofline %.3fs, feeders %d: tree %v", lt, bound, m.feeders(ph[0]), lab.Time)
	if got := lab.Time.Seconds(); got < 1.05*lt || !lab.CPUBound {
		t.Errorf("tree on 2 shared cores: %v (CPU bound %v), want over 1.05 × links %v", lab.Time, lab.CPUBound, lt)
	}
	// Channels are chosen on the links and roofline alone (treeChannels):
	// one here, as before the overlap term, which would gain on two.
	in.Channels = 0
	if c := predictAll(t, in)["tree"].Channels; c != 1 {
		t.Errorf("tree on 2 shared cores chooses %d channels, want 1", c)
	}
	in.Topology, in.Channels = spread, 1
	free := predictAll(t, in)["tree"]
	in.Links = withoutCPUInput(in).Links
	none := predictAll(t, in)["tree"]
	if free.Time != none.Time || free.CPUBound {
		t.Errorf("tree on free cores: %v (CPU bound %v), without CPU figures %v", free.Time, free.CPUBound, none.Time)
	}
}
