package tune

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestArrivalsMatchWalk: arrivals' one pass over the tree (parents before
// children) gives exactly what walking every rank's path gives (review
// B16 F3 replaced the walk, n²/2 steps on a chain), down and up, on the
// chain, binomial and binary trees of a few roots and on random forests.
func TestArrivalsMatchWalk(t *testing.T) {
	topo := grid(t, 3, 4, 5)
	links := DefaultLinks()
	links.Site.Latency = 37 * time.Microsecond
	m := newModel(Input{Topology: topo, Bytes: 1 << 20, ChunkBytes: 512 << 10, Root: 7, Links: links.With(topo)})
	walk := func(parent []int, up bool) []float64 {
		at := make([]float64, m.n)
		for x := range at {
			lat := 0.0
			if !up {
				var path []int
				for y := x; parent[y] >= 0; y = parent[y] {
					path = append(path, y)
				}
				for i := len(path) - 1; i >= 0; i-- {
					lat += m.alpha(parent[path[i]], path[i])
				}
				at[x] = lat
				continue
			}
			for y := x; parent[y] >= 0; y = parent[y] {
				lat += m.alpha(y, parent[y])
				at[parent[y]] = max(at[parent[y]], lat)
			}
		}
		return at
	}
	trees := append(append(m.chainParents(), m.binomialParents()...), m.treeParents(7, 2)...)
	rng := rand.New(rand.NewPCG(16, 2))
	for range 20 {
		parent := make([]int, m.n)
		perm := rng.Perm(m.n)
		for i, x := range perm { // each rank's parent comes before it in perm: a forest
			parent[x] = -1
			if i > 0 && rng.IntN(8) > 0 {
				parent[x] = perm[rng.IntN(i)]
			}
		}
		trees = append(trees, parent)
	}
	for i, parent := range trees {
		for _, up := range []bool{false, true} {
			got, want := m.arrivals(parent, up), walk(parent, up)
			for x := range want {
				if got[x] != want[x] {
					t.Fatalf("tree %d, up %v: rank %d's arrival %v, the walk's %v", i, up, x, got[x], want[x])
				}
			}
		}
	}
}

// TestLinkTimeAllocs: a phase's link time allocates nothing per flow (its
// loads live in the model's scratch), at 4096 ranks where a map entry and
// a load per resource were some 2M allocations a Predict (review B16 F3).
func TestLinkTimeAllocs(t *testing.T) {
	topo := grid(t, 8, 64, 8)
	m := newModel(Input{Topology: topo, Bytes: 1 << 20, ChunkBytes: 512 << 10, Links: DefaultLinks().With(topo)})
	phases := m.recursiveDoubling()
	var ring phase
	members := make([]int, m.n)
	for i := range members {
		members[i] = i
	}
	m.ring(&ring, members, 1<<20, 2*(m.n-1), 0.5)
	phases = append(phases, ring)
	for _, p := range phases {
		m.linkTime(p) // the scratch's first fill
	}
	if a := testing.AllocsPerRun(5, func() {
		for _, p := range phases {
			m.linkTime(p)
		}
	}); a > float64(2*len(phases)) {
		t.Errorf("%v allocations for %d phases of %d flows each", a, len(phases), m.n)
	}
}

// BenchmarkPredict4096 is one cache miss of a job's automatic choice
// (collective's modelChoose: a whole Predict) at 4096 ranks, 8 sites x 64
// hosts x 8 ranks, 1 MiB in chunks of 512K (review B16 F3); its
// allocations and CPU are what the first call of a new priced size pays
// on every rank.
func BenchmarkPredict4096(b *testing.B) {
	topo := grid(b, 8, 64, 8)
	for _, c := range []struct {
		name string
		coll Collective
	}{{"AllReduce", AllReduce}, {"Broadcast", Broadcast}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Predict(c.coll, Input{Topology: topo, Bytes: 1 << 20, ChunkBytes: 512 << 10, Root: 5, Links: DefaultLinks()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
