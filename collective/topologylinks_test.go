package collective

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// Comm.Topology carries the link figures the communicator chooses with, in
// a copy the caller may change without changing the communicator's.
func TestCommTopologyKeepsLinks(t *testing.T) {
	lan := topology.Link{Latency: 25 * time.Microsecond, Bandwidth: 1.25e9}
	topo := gridTopology(t, 1, 2, 1)
	topo.Links = &topology.Links{Site: &lan, Pairs: []topology.HostLink{{A: "s0h0", B: "s0h1", Link: lan}}}
	w, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(w.Endpoints()[0], 1, Config{Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, ok := c.Topology()
	if !ok || got.Links == nil || got.Links.Site == nil || *got.Links.Site != lan || len(got.Links.Pairs) != 1 {
		t.Fatalf("Comm.Topology() links %+v, want the communicator's", got.Links)
	}
	got.Links.Site.Bandwidth, got.Links.Pairs[0].Bandwidth = 1, 1
	if again, _ := c.Topology(); again.Links.Site.Bandwidth != lan.Bandwidth || again.Links.Pairs[0].Bandwidth != lan.Bandwidth {
		t.Errorf("changing the copy changed the communicator's figures: %+v", again.Links)
	}
}
