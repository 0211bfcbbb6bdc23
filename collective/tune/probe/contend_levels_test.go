package probe_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
)

// layout builds a topology from each rank's host and site, in rank order.
func layout(t *testing.T, hs [][2]string) topology.Topology {
	t.Helper()
	var rs []topology.RankInfo
	local := map[string]int{}
	for r, h := range hs {
		rs = append(rs, topology.RankInfo{Rank: r, Host: h[0], Site: h[1], LocalRank: local[h[0]]})
		local[h[0]]++
	}
	topo, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// A level's contended round starts only when every rank has left the
// level below: on one site with ranks 0, 1, 2 on host a and 3 on host b,
// the host round is pair (0, 1) and the site round (0, 3); rank 3, in no
// host pair, must not be charged its wait for rank 0's host round. With a
// clock that burns half a core whatever the rank does, the site's busy CPU
// a byte is one pair's, 1/bandwidth, whether the host link is fast or slow
// (before the per-level barrier: 51x with a 10 MB/s host link).
func TestContendedRoundsStartTogether(t *testing.T) {
	topo := layout(t, [][2]string{{"a", "s"}, {"a", "s"}, {"a", "s"}, {"b", "s"}})
	for _, hostBW := range []float64{10e9, 10e6} {
		links := tune.DefaultLinks()
		links.Host = tune.Link{Latency: 10 * time.Microsecond, Bandwidth: hostBW}
		links.Site = tune.Link{Latency: 50 * time.Microsecond, Bandwidth: 1e9}
		got := measureWith(t, topo, links, func(_ int, now func() time.Duration) probe.Options {
			return probe.Options{Now: now, CPUTime: func() time.Duration { return now() / 2 }}
		})
		site := got[0].Site
		if site == nil {
			t.Fatal("no site figures")
		}
		want := 1 / links.Site.Bandwidth
		busy := max(site.CPUPerByte, site.CPUPerByteBusy)
		t.Logf("host link %.3g B/s: site CPU a byte %.4g s, busy %.4g s (1/bandwidth %.4g), bandwidth %.4g", hostBW, site.CPUPerByte, site.CPUPerByteBusy, want, site.Bandwidth)
		if busy > 1.5*want {
			t.Errorf("host link %.3g B/s: site busy CPU a byte %.4g s, %.1fx one pair's %.4g: a wait for a lower level's round was charged to the site's bytes", hostBW, busy, busy/want, want)
		}
	}
}

// A level's round is timed over its span from a common start: in Slurm's
// cyclic placement over 2 sites (hosts a, c, a, c, b, d; sites x, y) the
// WAN pairs start together, and the WAN bandwidth the probe reports is no
// more than the uplink's 50 MB/s (with staggered starts: 2.8 % above it),
// but for the barrier's own skew (the ranks leave an AllReduce up to a
// latency apart: 0.03 % here), well under 1 %.
func TestContendedRoundSpan(t *testing.T) {
	topo := layout(t, [][2]string{{"a", "x"}, {"c", "y"}, {"a", "x"}, {"c", "y"}, {"b", "x"}, {"d", "y"}})
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 2 * time.Millisecond, Bandwidth: 50e6}
	got := measure(t, topo, links)
	wan := got[0].WAN
	if wan == nil {
		t.Fatal("no WAN figures")
	}
	t.Logf("cyclic 2 sites: WAN %v %.6g B/s", wan.Latency, wan.Bandwidth)
	if wan.Bandwidth > links.WAN.Bandwidth*1.01 {
		t.Errorf("WAN bandwidth %.8g B/s above the uplink's %.8g", wan.Bandwidth, links.WAN.Bandwidth)
	}
}
