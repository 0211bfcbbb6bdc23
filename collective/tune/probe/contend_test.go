package probe_test

import (
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
)

// LevelPairs pairs every rank it can at each level, lowest ranks first,
// and counts the pairs that leave by one link: on 2 sites x 2 hosts x 2
// ranks, a host's two ranks (a port each), the hosts of a site rank by
// rank (two through each host's NIC) and the sites rank by rank (four
// through site 0's uplink); a level without two ranks that meet there has
// no pairs.
func TestLevelPairs(t *testing.T) {
	topo := grid(t, 2, 2, 2)
	for l, want := range []struct {
		pairs [][2]int
		k     int
	}{
		{[][2]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, 1},
		{[][2]int{{0, 2}, {1, 3}, {4, 6}, {5, 7}}, 2},
		{[][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, 4},
	} {
		if pairs, k := probe.LevelPairs(topo, l); !reflect.DeepEqual(pairs, want.pairs) || k != want.k {
			t.Errorf("level %d: pairs %v, %d through one link; want %v, %d", l, pairs, k, want.pairs, want.k)
		}
	}
	one := grid(t, 1, 1, 3)
	if pairs, k := probe.LevelPairs(one, 0); !reflect.DeepEqual(pairs, [][2]int{{0, 1}}) || k != 1 {
		t.Errorf("3 ranks on a host: %v, %d; want [[0 1]], 1", pairs, k)
	}
	if pairs, k := probe.LevelPairs(one, 1); pairs != nil || k != 0 {
		t.Errorf("one host: site pairs %v, %d; want none", pairs, k)
	}
}

// The contended round sees what a phase on every pair at once sees: on 2 x
// 2 x 2 whose sites share one uplink of 50 MB/s, with each rank's CPU time
// half the virtual time (a process that burns half a core whatever it
// does), the lone WAN pair's byte costs 1/50e6 s of CPU (CPUPerByte), but
// the four WAN pairs at once take four times as long a byte through the
// shared uplink, so the level's busy CPU a byte (CPUPerByteBusy) is
// 4/50e6; its bandwidth stays the uplink's.
// Where the uplink has 4 lanes (each pair as fast as the lone one), the
// round carries 4 lone transfers' worth: the bandwidth stays the lone
// transfer's (Link.Lanes are not measured) and the busy CPU a byte 1/50e6.
func TestMeasureContended(t *testing.T) {
	links := tune.DefaultLinks()
	for _, lanes := range []int{1, 4} {
		links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6, Lanes: lanes}
		got := measureWith(t, grid(t, 2, 2, 2), links, func(_ int, now func() time.Duration) probe.Options {
			return probe.Options{Now: now, CPUTime: func() time.Duration { return now() / 2 }}
		})
		wan := got[0].WAN
		if wan == nil {
			t.Fatal("no WAN figures")
		}
		for r := range got {
			if !reflect.DeepEqual(got[r], got[0]) {
				t.Errorf("%d lanes: rank %d measured %+v, rank 0 %+v", lanes, r, got[r], got[0])
			}
		}
		shared := 4.0 / float64(lanes)
		t.Logf("%d lanes: WAN %.4g B/s, CPU a byte %.4g s", lanes, wan.Bandwidth, wan.CPUPerByte)
		if math.Abs(wan.Bandwidth/links.WAN.Bandwidth-1) > 0.05 {
			t.Errorf("%d lanes: WAN bandwidth %.4g, want %.4g ± 5 %%", lanes, wan.Bandwidth, links.WAN.Bandwidth)
		}
		if want := shared / links.WAN.Bandwidth; math.Abs(wan.CPUPerByteBusy/want-1) > 0.05 {
			t.Errorf("%d lanes: busy CPU a byte %.4g s, want %.4g ± 5 %% (4 pairs, %d lanes)", lanes, wan.CPUPerByteBusy, want, lanes)
		}
		if want := 1 / links.WAN.Bandwidth; math.Abs(wan.CPUPerByte/want-1) > 0.05 {
			t.Errorf("%d lanes: the lone pair's CPU a byte %.4g s, want %.4g ± 5 %%", lanes, wan.CPUPerByte, want)
		}
		// The round's small round trips, all pairs at once: simnet costs
		// no CPU and 8 bytes hardly load a link, so each level's busy
		// latency is its latency.
		for name, l := range map[string]struct {
			got  *tune.Link
			want time.Duration
		}{"host": {got[0].Host, links.Host.Latency}, "site": {got[0].Site, links.Site.Latency}, "wan": {wan, links.WAN.Latency}} {
			if l.got == nil || math.Abs(float64(l.got.LatencyBusy)/float64(l.want)-1) > 0.05 {
				t.Errorf("%d lanes: %s busy latency %+v, want %v ± 5 %%", lanes, name, l.got, l.want)
			}
		}
	}
}

// In virtual time the probe, contended rounds included, is deterministic:
// two probes of the same simulated 2 x 2 x 2 world give the very same
// figures (without a CPU clock, as in virtual time by default: a test's
// clock read off the world's time sees it move on by the goroutines'
// scheduling).
func TestMeasureDeterministic(t *testing.T) {
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6}
	first := measure(t, grid(t, 2, 2, 2), links)
	for range 3 {
		if again := measure(t, grid(t, 2, 2, 2), links); !reflect.DeepEqual(again, first) {
			t.Fatalf("a second probe measured host %+v, site %+v, WAN %+v; the first %+v, %+v, %+v",
				*again[0].Host, *again[0].Site, *again[0].WAN, *first[0].Host, *first[0].Site, *first[0].WAN)
		}
	}
}

// The unlucky probe (bench/results/quiet-20261206-1638/model_sweep: all
// three lone WAN pairs on 3 of the lab's 4 links, 71.9 MB/s, and the job
// then ran at the 4 links' rate): on the lab's 2 x 2 x 2 whose uplink
// carries 100 MB/s but every pair of hosts across it only 75 (or 50, 2 of
// 4 links), as connections whose ports missed some links, every lone pair
// measures 75 (50) while the contended round, every link busy, carries
// the uplink's 100. Where every rank says the WAN is multipath (MetaRoCE,
// whose connections re-pick onto every link) the level gets the uplink's
// figure; where one rank says it is not (a TCP connection is one link)
// it keeps the lone transfers', on every rank alike. Options.Observe sees
// the round's bytes (a bulk transfer a pair on the multipath WAN, a
// quarter of one elsewhere), the spread pairs that ran (on the multipath
// WAN one, then, as the round read well above the lone pairs, two more
// for the second look, spreadmore.go, which read what theirs did; two
// elsewhere) and the figures the level came from.
func TestMeasureMultipathUnlucky(t *testing.T) {
	const uplink = 100e6
	for _, pair := range []float64{75e6, 50e6} {
		links := tune.DefaultLinks()
		links.WAN = tune.Link{Latency: 2 * time.Millisecond, Bandwidth: uplink}
		for _, a := range []string{"s0h0", "s0h1"} {
			for _, b := range []string{"s1h0", "s1h1"} {
				links.Pairs = append(links.Pairs, topology.HostLink{A: a, B: b, Link: topology.Link{Latency: 2 * time.Millisecond, Bandwidth: pair}})
			}
		}
		for _, c := range []struct {
			name      string
			says      func(r int) bool // whether rank r says the WAN is multipath
			multipath bool
			wantBW    float64
		}{
			{"multipath", func(int) bool { return true }, true, uplink},
			{"one rank on one path", func(r int) bool { return r != 3 }, false, pair},
			{"no rank multipath", func(int) bool { return false }, false, pair},
		} {
			var mu sync.Mutex
			seen := map[int]probe.Detail{}
			got := measureWith(t, grid(t, 2, 2, 2), links, func(r int, now func() time.Duration) probe.Options {
				o := probe.Options{Now: now, Multipath: [3]bool{false, true, c.says(r)}}
				o.Observe = func(d probe.Detail) {
					if d.Level == 2 {
						mu.Lock()
						seen[r] = d
						mu.Unlock()
					}
				}
				return o
			})
			wan := got[0].WAN
			if wan == nil {
				t.Fatalf("%s, pairs at %.3g: no WAN figures", c.name, pair)
			}
			for r := range got {
				if !reflect.DeepEqual(got[r], got[0]) || seen[r] != seen[0] {
					t.Errorf("%s: rank %d measured %+v (%+v), rank 0 %+v (%+v)", c.name, r, got[r], seen[r], got[0], seen[0])
				}
			}
			d := seen[0]
			t.Logf("%s, pairs at %.3g: WAN %.4g B/s; %+v", c.name, pair, wan.Bandwidth, d)
			if math.Abs(wan.Bandwidth/c.wantBW-1) > 0.05 {
				t.Errorf("%s, pairs at %.3g: WAN bandwidth %.4g, want %.4g ± 5 %%", c.name, pair, wan.Bandwidth, c.wantBW)
			}
			multipath := c.multipath
			wantBytes, wantSpread := 1<<20, 2
			if multipath { // 1, and spreadMore for the second look (the round read 4/3 or 2 of them)
				wantBytes, wantSpread = 4<<20, 3
			}
			if d.Multipath != multipath || d.Bytes != wantBytes || d.K != 4 || d.Pairs != 4 || d.SpreadPairs != wantSpread || d.Bandwidth != wan.Bandwidth {
				t.Errorf("%s, pairs at %.3g: detail %+v; want multipath %v, %d spread pairs, 4 pairs of %d bytes in the round, 4 a link, bandwidth %.4g",
					c.name, pair, d, multipath, wantSpread, wantBytes, wan.Bandwidth)
			}
			if math.Abs(d.Lone/pair-1) > 0.05 || math.Abs(d.Spread/pair-1) > 0.05 || math.Abs(d.Contended/uplink-1) > 0.05 {
				t.Errorf("%s, pairs at %.3g: lone %.4g, spread %.4g, contended %.4g; want %.3g, %.3g, %.3g ± 5 %%", c.name, pair, d.Lone, d.Spread, d.Contended, pair, pair, uplink)
			}
		}
	}
}

// A multipath level's contended round starts its transfers together: on
// the lab's 2 x 2 x 2 with an uplink of 100 MB/s, the WAN pairs of the
// second hosts (2, 6) and (3, 7) have a round trip three times the first
// hosts' (12 ms against 4), so their busy round trips end ~64 ms later.
// Started as each pair's round trips end, the first hosts' pairs would
// move their bytes mostly alone and the slowest pair's time would put
// the round's aggregate near twice the uplink (the lab: 120 MB/s over 4
// links of 25); after the second barrier the round carries the uplink's
// 100 (less the slow pairs' longer acknowledgement: within 15 %).
func TestMeasureContendedStartsTogether(t *testing.T) {
	const uplink = 100e6
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 2 * time.Millisecond, Bandwidth: uplink}
	links.Pairs = []topology.HostLink{{A: "s0h1", B: "s1h1", Link: topology.Link{Latency: 6 * time.Millisecond, Bandwidth: uplink}}}
	var mu sync.Mutex
	var d probe.Detail
	measureWith(t, grid(t, 2, 2, 2), links, func(r int, now func() time.Duration) probe.Options {
		return probe.Options{Now: now, Multipath: [3]bool{false, true, true}, Observe: func(got probe.Detail) {
			if got.Level == 2 && r == 0 {
				mu.Lock()
				d = got
				mu.Unlock()
			}
		}}
	})
	t.Logf("%+v", d)
	if d.Contended > 1.15*uplink || d.Contended < 0.85*uplink {
		t.Errorf("the round's aggregate %.4g B/s, want the uplink's %.4g ± 15 %%", d.Contended, uplink)
	}
}
