package collective

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

func gridTopology(t *testing.T, sites, hosts, ranks int) *topology.Topology {
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
	return &tp
}

// TestModelAlgorithm checks what auto asks the cost model, and that the
// answer for a size class does not depend on the size that filled it.
func TestModelAlgorithm(t *testing.T) {
	tests := []struct {
		name  string
		topo  *topology.Topology
		kind  Kind
		bytes int
		root  int
		want  []Algorithm // any of
	}{
		{"no topology", nil, KindAllReduce, 16 << 20, -1, []Algorithm{AlgoAuto}},
		{"one host", gridTopology(t, 1, 1, 8), KindAllReduce, 16 << 20, -1, []Algorithm{AlgoAuto}},
		{"two sites, 16 MiB", gridTopology(t, 2, 2, 2), KindAllReduce, 16 << 20, -1, []Algorithm{AlgoHierarchical}},
		{"flat hosts, 8 B", gridTopology(t, 1, 8, 1), KindAllReduce, 8, -1, []Algorithm{AlgoRecursiveDoubling}},
		{"flat hosts, 64 MiB", gridTopology(t, 1, 8, 1), KindAllReduce, 64 << 20, -1, []Algorithm{AlgoRing}},
		{"broadcast, bad root", gridTopology(t, 1, 8, 1), KindBroadcast, 8, 8, []Algorithm{AlgoAuto}},
		{"broadcast, 8 B", gridTopology(t, 1, 8, 1), KindBroadcast, 8, 3, []Algorithm{AlgoBinomial, AlgoTree}},
	}
	for _, tc := range tests {
		n := 8
		w, err := inproc.NewWorld(n)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(w.Endpoints()[0], 1, Config{Topology: tc.topo})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{tc.bytes, tc.bytes * 3 / 4} { // one class, filled by either size
			if got := c.modelAlgorithm(tc.kind, b, tc.root); !slices.Contains(tc.want, got) {
				t.Errorf("%s, %d B: %v, want %v", tc.name, b, got, tc.want)
			}
		}
		_ = w.Close()
	}
}
