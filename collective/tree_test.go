package collective

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// TestDoubleTreeShapes checks the trees AlgoTree runs on: spanning trees
// with correct heights and depths; for AllReduce, no rank with children in
// both; for a rooted operation, the root above both trees' roots, having no
// other children. With a topology numbered cyclically, edges between sites
// number at most about (sites+1) × height.
func TestDoubleTreeShapes(t *testing.T) {
	cyclic := func(n, sites int) *topology.Topology { // rank r on site r mod sites, one host per rank
		ranks := make([]topology.RankInfo, n)
		for r := range ranks {
			ranks[r] = topology.RankInfo{Rank: r, Host: fmt.Sprint("h", r), Site: fmt.Sprint("s", r%sites)}
		}
		tp, err := topology.New(ranks)
		if err != nil {
			t.Fatal(err)
		}
		return &tp
	}
	for _, n := range []int{2, 3, 5, 8, 13, 16, 24, 64, 200} {
		for _, topo := range []*topology.Topology{nil, cyclic(n, 2), cyclic(n, 3)} {
			w, err := inproc.NewWorld(n)
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(w.Endpoints()[0], 1, Config{Topology: topo})
			if err != nil {
				t.Fatal(err)
			}
			for _, root := range []int{-1, 0, n - 1, n / 2} {
				for _, chans := range []int{1, 3} {
					checkTrees(t, n, root, topo, c.trees(root, chans))
				}
			}
			_ = w.Close()
		}
	}
}

// checkTrees checks the trees of channels: each a tree over all ranks
// (checkShape), few edges between sites, no rank with children in both
// trees of a channel, and the channels' trees distinct from each other.
func checkTrees(t *testing.T, n, root int, topo *topology.Topology, trees []treeShape) {
	t.Helper()
	for ch := 0; ch < len(trees); ch += 2 {
		if ch > 0 && n > 3 && slices.Equal(trees[ch].parent, trees[0].parent) {
			t.Errorf("n=%d root %d: channel %d's first tree is channel 0's", n, root, ch/2)
		}
		inner := make([]int, n)
		for ti, s := range trees[ch : ch+2] {
			checkShape(t, n, ti, root, s)
			crossings := 0
			for x, p := range s.parent {
				if p >= 0 && topo != nil && topo.Ranks[x].Site != topo.Ranks[p].Site {
					crossings++
				}
				if len(s.children[x]) > 0 && x != root {
					inner[x]++
				}
			}
			// Cyclic numbering: trees over rank order would cross
			// sites on most edges (2/3 of them with three sites).
			// A site is one run of the ring order (two once the
			// root is taken out), and each boundary between runs
			// is crossed by at most one edge per level; trees over
			// the cyclic rank order would cross on most edges.
			if topo != nil && crossings > (len(topo.Sites())+1)*s.height[s.root]+2 {
				t.Errorf("n=%d root %d tree %d: %d edges between sites", n, root, ti, crossings)
			}
		}
		for x, k := range inner {
			if k > 1 {
				t.Errorf("n=%d root %d channel %d: rank %d has children in both trees", n, root, ch/2, x)
			}
		}
	}
}

func checkShape(t *testing.T, n, ti, root int, s treeShape) {
	t.Helper()
	if root >= 0 && (s.root != root || len(s.children[root]) != 1) {
		t.Errorf("n=%d tree %d: root %d with children %v, want %d above one tree root", n, ti, s.root, s.children[s.root], root)
	}
	seen := 0
	var walk func(x, depth int) int
	walk = func(x, depth int) int {
		seen++
		if s.depth[x] != depth {
			t.Errorf("n=%d tree %d: rank %d depth %d, want %d", n, ti, x, s.depth[x], depth)
		}
		h := 0
		for _, ch := range s.children[x] {
			if s.parent[ch] != x {
				t.Errorf("n=%d tree %d: child %d of %d has parent %d", n, ti, ch, x, s.parent[ch])
			}
			h = max(h, walk(ch, depth+1)+1)
		}
		if s.height[x] != h {
			t.Errorf("n=%d tree %d: rank %d height %d, want %d", n, ti, x, s.height[x], h)
		}
		return h
	}
	walk(s.root, 0)
	if seen != n {
		t.Errorf("n=%d tree %d: %d ranks reachable, want %d", n, ti, seen, n)
	}
}
