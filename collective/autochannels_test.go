package collective

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// Config.Channels 0 takes the cost model's channel count for a ring
// AllReduce: on 2 sites x 2 hosts x 2 ranks whose WAN has 4 lanes (paths),
// two rings (strides 1 and 7) put the two crossings of each direction on
// separate lanes, so a 64 MiB ring runs on 2 channels (gocoll sim: 591 ms
// against 1.178 s on one); with one WAN lane, on one; below 2 chunks, on
// one; Config.Channels 1 or 3 overrides it; without a topology, one.
func TestAutoChannels(t *testing.T) {
	wan := func(lanes int) *topology.Topology {
		topo := gridTopology(t, 2, 2, 2)
		topo.Links = &topology.Links{WAN: &topology.Link{Latency: 2 * time.Millisecond, Bandwidth: 100e6, Lanes: lanes}}
		return topo
	}
	for _, tc := range []struct {
		name     string
		topo     *topology.Topology
		channels int
		bytes    int
		want     int
	}{
		{"4 WAN lanes", wan(4), 0, 64 << 20, 2},
		{"4 WAN lanes, 4 MiB", wan(4), 0, 4 << 20, 2},
		{"4 WAN lanes, one chunk", wan(4), 0, 512 << 10, 1},
		{"1 WAN lane", wan(1), 0, 64 << 20, 1},
		{"forced 1", wan(4), 1, 64 << 20, 1},
		{"forced 3", wan(1), 3, 64 << 20, 3},
		{"no topology", nil, 0, 64 << 20, 1},
	} {
		w, err := inproc.NewWorld(8)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(w.Endpoints()[3], 1, Config{Topology: tc.topo, Channels: tc.channels, AllReduce: AlgoRing, ChunkBytes: 512 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(c.ringStrides(tc.bytes/4, 4)); got != tc.want {
			t.Errorf("%s: a ring AllReduce of %d B on %d channels, want %d", tc.name, tc.bytes, got, tc.want)
		}
		_ = c.Close()
		_ = w.Close()
	}
}
