package collective

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// The link figures Config.Topology carries (a version 2 topology file's)
// reach the cost model: on 2 sites x 2 hosts x 2 ranks at 1 MiB, the
// assumed WAN (12.5 times slower than the LAN) makes auto hierarchical, a
// WAN as fast as the LAN the ring (gocoll sim: ring 20.4 against
// hierarchical 13.2 ms, and 1.84 against 2.22 ms); a topology whose links
// name an unknown host is refused. (At 64 MiB the uniform links are a
// tie, hierarchical 92.9 against ring 94.0 ms in gocoll sim, which the
// model prices so since session 21.)
func TestTopologyLinksReachTheChoice(t *testing.T) {
	lan := topology.Link{Latency: 25 * time.Microsecond, Bandwidth: 1.25e9}
	for _, tc := range []struct {
		links *topology.Links
		want  Algorithm
	}{{nil, AlgoHierarchical}, {&topology.Links{Host: &lan, Site: &lan, WAN: &lan}, AlgoRing}} {
		topo := gridTopology(t, 2, 2, 2)
		topo.Links = tc.links
		w, err := inproc.NewWorld(8)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(w.Endpoints()[0], 1, Config{Topology: topo})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.modelAlgorithm(KindAllReduce, 1<<20, -1); got != tc.want {
			t.Errorf("links %+v: %v, want %v", tc.links, got, tc.want)
		}
		_ = c.Close()
		_ = w.Close()
	}
	topo := gridTopology(t, 2, 2, 2)
	topo.Links = &topology.Links{Pairs: []topology.HostLink{{A: "s0h0", B: "elsewhere", Link: lan}}}
	w, err := inproc.NewWorld(8)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := New(w.Endpoints()[0], 1, Config{Topology: topo}); err == nil {
		t.Error("a link to an unknown host: no error")
	}
}
