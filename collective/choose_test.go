package collective

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocoll/gocoll/collective/tune"
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
// answer for a priced size does not depend on the size that filled it.
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
		for _, b := range []int{tc.bytes, tc.bytes + tc.bytes/32} { // one priced size, filled by either
			if got := c.modelAlgorithm(tc.kind, b, tc.root); !slices.Contains(tc.want, got) {
				t.Errorf("%s, %d B: %v, want %v", tc.name, b, got, tc.want)
			}
		}
		_ = w.Close()
	}
}

// PricedBytes keeps the top 4 significant bits: powers of two and k·2^j
// (k < 16) exactly, any other size at most 1/8 below itself.
func TestPricedBytes(t *testing.T) {
	for in, want := range map[int]int{-1: 0, 0: 0, 1: 1, 15: 15, 16: 16, 17: 16, 31: 30, 1000: 960, 16 << 20: 16 << 20,
		16<<20 + 1: 16 << 20, 32<<20 - 1: 30 << 20, 20000000: 18874368} {
		if got := PricedBytes(in); got != want {
			t.Errorf("PricedBytes(%d) = %d, want %d", in, got, want)
		}
	}
	if huge := int64(3) << 40; int64(int(huge)) == huge { // a 64-bit int
		if got := PricedBytes(int(huge)); int64(got) != huge {
			t.Errorf("PricedBytes(%d) = %d, want %d", huge, got, huge)
		}
	}
	for b := 1; b < 1<<22; b += 1 + b/7 {
		p := PricedBytes(b)
		if p > b || 8*p < 7*b || PricedBytes(p) != p {
			t.Fatalf("PricedBytes(%d) = %d: want in (7/8 b, b] and priced as itself", b, p)
		}
	}
}

// The communicator's automatic choice is the model's at PricedBytes of the
// call's size and the communicator's chunk -- what `gocoll topo --explain`
// prints for that size and chunk -- at every size from 8 B to 256 MiB and
// between the priced sizes: a 16 MiB call is priced as 16 MiB, not as the
// top of its power-of-two class.
func TestModelChooseAgreesWithPredict(t *testing.T) {
	topo := gridTopology(t, 2, 2, 2)
	w, err := inproc.NewWorld(8)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	for _, chunk := range []int{512 << 10, 2 << 20} {
		c, err := New(w.Endpoints()[0], 1, Config{Topology: topo, ChunkBytes: chunk})
		if err != nil {
			t.Fatal(err)
		}
		for b := 8; b <= 256<<20; b *= 2 {
			for _, size := range []int{b, b + b/3} {
				got := c.modelChoose(KindAllReduce, size, -1)
				ps, err := tune.Predict(tune.AllReduce, tune.Input{Topology: *topo, Bytes: PricedBytes(size), ChunkBytes: chunk, Links: tune.DefaultLinks()})
				if err != nil {
					t.Fatal(err)
				}
				if got.algo.String() != ps[0].Algorithm {
					t.Errorf("chunk %d, %d B: chose %v, the model at %d B says %s", chunk, size, got.algo, PricedBytes(size), ps[0].Algorithm)
				}
			}
		}
	}
}

func TestParseAlgoSpec(t *testing.T) {
	good := []struct {
		in   string
		want AlgoSpec
	}{
		{"", AlgoSpec{}},
		{"tree", AlgoSpec{AllReduce: AlgoTree, Broadcast: AlgoTree, Reduce: AlgoTree}},
		{"direct", AlgoSpec{AllReduce: AlgoDirect, Broadcast: AlgoDirect}},
		{"chain", AlgoSpec{Broadcast: AlgoChain, Reduce: AlgoChain}},
		{"allreduce:hierarchical, Broadcast:chain", AlgoSpec{AllReduce: AlgoHierarchical, Broadcast: AlgoChain}},
		{"tree,reduce:binomial", AlgoSpec{AllReduce: AlgoTree, Broadcast: AlgoTree, Reduce: AlgoBinomial}},
		{"tree,allreduce:auto", AlgoSpec{AllReduce: AlgoAuto, Broadcast: AlgoTree, Reduce: AlgoTree}},
		{"hierarchical", AlgoSpec{AllReduce: AlgoHierarchical, Broadcast: AlgoHierarchical, ReduceScatter: AlgoHierarchical, AllGather: AlgoHierarchical}},
		{"ring,allgather:hierarchical", AlgoSpec{AllReduce: AlgoRing, ReduceScatter: AlgoRing, AllGather: AlgoHierarchical}},
	}
	for _, tc := range good {
		got, err := ParseAlgoSpec(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseAlgoSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := map[string]string{
		"fastest":                `unknown algorithm "fastest"`,
		"pairwise":               "no collective has algorithm pairwise",
		"allgather:tree":         "allgather has no algorithm tree",
		"reduce:direct":          "reduce has no algorithm direct",
		"gather:direct":          `unknown collective "gather"`,
		"tree,,ring":             `entry ""`,
		strings.Repeat("a", 300): "more than 256",
	}
	for in, want := range bad {
		if _, err := ParseAlgoSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAlgoSpec(%.20q): %v, want an error with %q", in, err, want)
		}
	}
	cfg := Config{Broadcast: AlgoBinomial}
	AlgoSpec{AllReduce: AlgoTree, Broadcast: AlgoTree, Reduce: AlgoChain}.Apply(&cfg)
	if cfg.AllReduce != AlgoTree || cfg.Broadcast != AlgoBinomial || cfg.Reduce != AlgoChain {
		t.Errorf("Apply: %v %v %v, want tree, binomial (set before), chain", cfg.AllReduce, cfg.Broadcast, cfg.Reduce)
	}
}

// FuzzParseAlgoSpec: any text gives an error or a spec whose every
// algorithm is one its collective has.
func FuzzParseAlgoSpec(f *testing.F) {
	for _, s := range []string{"", "tree", "allreduce:ring,broadcast:chain", "reduce:direct", ",:", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseAlgoSpec(s)
		if err != nil {
			return
		}
		for _, c := range []struct {
			kind Kind
			a    Algorithm
		}{{KindAllReduce, spec.AllReduce}, {KindBroadcast, spec.Broadcast}, {KindReduce, spec.Reduce},
			{KindReduceScatter, spec.ReduceScatter}, {KindAllGather, spec.AllGather}} {
			if c.a != AlgoAuto && !slices.Contains(Algorithms(c.kind), c.a) {
				t.Fatalf("%q: %v got %v", s, c.kind, c.a)
			}
		}
	})
}
