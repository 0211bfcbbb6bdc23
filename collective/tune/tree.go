package tune

import (
	"math"
	"slices"

	"github.com/gocoll/gocoll/topology"
)

// TreeShift is the rotation of the trees' order (the topology's ring order;
// for a rooted operation the other ranks, starting after the root) under
// channel ch of an operation on channels: channel ch lays its two trees
// over the order rotated by TreeShift and by one more, so that the
// channels' trees have other roots, inner ranks and edges, and load other
// links. Channel 0 has the shifts 0 and 1 of the double binary tree.
// collective's trees and the model both take it.
func TreeShift(n, ch, channels int) int {
	return ch * n / max(1, channels)
}

// TreeChannels returns how many channels a tree operation of bytes in
// chunks of chunkBytes runs on when c are asked for: c in [1,
// ChannelsMax], fewer where a tree's part (bytes/2c) would be under a
// chunk.
func TreeChannels(c, bytes, chunkBytes int) int {
	return max(1, min(c, ChannelsMax, bytes/(2*max(1, chunkBytes))))
}

// Tree pipelining: a tree's part of the buffer moves in at least
// TreeChunksMin chunks where chunks of a TreeChunkDiv-th of the
// communicator's chunk or more allow, whatever that chunk is (MetaRoCE's
// is 2 MiB): a 4 MiB AllReduce on one channel gives each of its two trees
// a 2 MiB part, which in one chunk would cross every edge whole before the
// next edge starts. In the two-site lab (loaded, interleaved, median of
// 12 calls) that AllReduce took 184 and 271 ms in chunks of 2 MiB, 164
// and 143 ms in chunks of 512 KiB; gocoll sim 107.6 ms against 94.8. Over
// MetaRoCE in virtual time (mrtransport's TestWANSimHierarchical, 10 seeds
// x 7 calls after the first), once a tree's way up no longer waits for its
// way down (collective's treeRun), it took 115 ms a call in 4 chunks of
// 512 KiB, 108 in 8 of 256 KiB, 108-110 in 12 or 16; the 1 MiB AllReduce
// 44 -> 36 ms, 16 MiB 422 -> 394 (5 seeds). The ideal fabric (gocoll
// sim) prices them alike. The floor is a fraction of the chunk, not a byte
// count, so that gocoll sim's payload-free runs (sizes and chunk scaled
// down alike) cut alike.
const (
	TreeChunksMin = 8
	TreeChunkDiv  = 16
)

// TreeChunk is the chunk a tree moves its part of partBytes in, with the
// communicator's chunk chunkBytes: chunkBytes, or less (down to
// chunkBytes/TreeChunkDiv) so that the part makes TreeChunksMin chunks.
// collective's trees and the model both take it.
func TreeChunk(partBytes, chunkBytes int) int {
	want := (partBytes + TreeChunksMin - 1) / TreeChunksMin
	return max(1, min(chunkBytes, max(want, chunkBytes/TreeChunkDiv)))
}

// treeParents returns the parents (-1 at the root) of the 2×channels trees
// of collective's tree operations: root -1 for AllReduce, else the root
// above both trees of every channel.
func (m *model) treeParents(root, channels int) [][]int {
	order := slices.Clone(m.order)
	if root >= 0 {
		i := slices.Index(order, root)
		order = append(slices.Clone(order[i+1:]), order[:i]...)
	}
	var out [][]int
	for ch := range channels {
		for t := range 2 {
			shift := TreeShift(len(order), ch, channels) + t
			pos := make([]int, len(order))
			for i := range pos {
				pos[i] = (i + shift) % len(order)
			}
			tr, err := topology.BinaryTree(pos)
			if err != nil {
				return nil // cannot happen: pos is a permutation
			}
			parent := make([]int, m.n)
			for i, p := range tr.Parent {
				parent[order[i]] = -1
				if p >= 0 {
					parent[order[i]] = order[p]
				}
			}
			if root >= 0 {
				parent[order[tr.Root]], parent[root] = root, -1
			}
			out = append(out, parent)
		}
	}
	return out
}

// treeChannels returns the tree's phases on the channels asked (0: the
// count among 1, 2, 4, 8 and 16 predicted fastest, more only when at least
// channelsGain faster than the best on fewer, and only where each tree's
// part keeps two chunks: a tree of one chunk does not pipeline, and its
// fan-in, which the fill prices per hop, makes it slower than predicted;
// gocoll sim, 64 ranks of 8 hosts, 2 MiB: 1.27x the model on one channel,
// 1.87x on two) and that count. The counts are compared on the links and
// the roofline alone (model.flat): the overlap term (overlapTime) gains
// with the flows that feed the busiest link, so it would put a tree on
// more channels, which the lab has not shown faster (in one loaded A/B,
// 16 MiB at load 35-45, 2 channels took 1.5-2.3x the time of 1 in the
// calmest round; bench/results/model_lab/model30.md).
func (m *model) treeChannels(asked, root int, up, down bool) ([]phase, int) {
	bytes, chunk := int(m.bytes), int(m.chunk)
	if asked > 0 {
		c := TreeChannels(asked, bytes, chunk)
		return m.tree(root, c, up, down), c
	}
	var best []phase
	bestT, bestC := 0.0, 0
	for _, c := range []int{1, 2, 4, 8, 16} {
		c = TreeChannels(c, bytes/2, chunk) // parts of two chunks at least
		if c <= bestC {
			continue
		}
		ph := m.tree(root, c, up, down)
		m.flat = true
		t := m.total(ph)
		m.flat = false
		if best == nil || t < bestT*(1-channelsGain) {
			best, bestT, bestC = ph, t, c
		}
	}
	return best, bestC
}

// tree is the double binary tree of collective (AlgoTree) on channels:
// two trees per channel (treeParents), a 2×channels-th of the buffer on
// each, all at once; root -1 for AllReduce, else the root above the trees.
// An edge's flows between the same two ranks share their connection, one
// chunk at a time (phase.serial).
func (m *model) tree(root, channels int, up, down bool) []phase {
	part := m.bytes / float64(2*channels)
	k := max(1, int(math.Ceil(part/float64(TreeChunk(int(part), int(m.chunk))))))
	c := part / float64(k)
	ph := phase{chunks: k, serial: true}
	height, path, fill, opening := 0, 0.0, 0.0, 0.0
	for _, parent := range m.treeParents(root, channels) {
		for x := range m.n {
			p := parent[x]
			if p < 0 {
				continue
			}
			if up {
				ph.flows = append(ph.flows, flow{x, p, part, 1}) // the parent reduces what comes up
			}
			if down {
				ph.flows = append(ph.flows, flow{p, x, part, 0})
			}
			hops, lat, f, o := 0, 0.0, 0.0, 0.0 // x's path to the root
			for y := x; parent[y] >= 0; y = parent[y] {
				hops++
				lat += m.alpha(y, parent[y])
				f += c / m.rate(y, parent[y])
				o += m.open(y, parent[y], part) // its edges open one after another (opening.go)
			}
			height, path, fill, opening = max(height, hops), max(path, lat), max(fill, f), max(opening, o)
		}
	}
	ways := 0
	for _, w := range []bool{up, down} {
		if w {
			ways++
		}
	}
	ph.steps, ph.lat = ways*height, float64(ways)*path
	ph.fill = float64(ways) * fill // the first chunk up the longest path and down
	ph.opening = float64(ways) * opening
	return []phase{ph}
}
