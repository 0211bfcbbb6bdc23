package collective

import (
	"slices"

	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
)

// Double binary tree (as NCCL's): the buffer is cut in two halves, and half
// t is reduced up tree t and broadcast down it. The two trees are
// topology.BinaryTree over the ring order (grouped site by site and host by
// host: every subtree is a run of that order, so the boundary between two
// sites is crossed by at most one edge per level) and over the same order
// shifted by one, so that every rank has children in at most one tree: each rank
// sends and receives about the whole buffer once each way, in
// 2*log2(n) + chunks steps instead of the ring's 2(n-1) + chunks.
//
// Broadcast and Reduce use two trees over the ranks other than the root,
// shifted the same way, with the root above both of their roots: the root
// sends (or receives) one half to (from) each.
//
// Channels (as NCCL's): on C channels the buffer is cut in 2C parts, and
// channel ch lays its two trees over the order rotated by
// tune.TreeShift(n, ch, C) (and one more), so that its trees have other
// roots, inner ranks and edges than the other channels' and load other
// links; each tree has its own chunks and messages in flight. One
// goroutine runs every tree, each as far as its messages allow (treeRun).

// treeShape is one tree over communicator ranks, with each rank's height
// (longest path down to a leaf) and depth (distance from the root).
type treeShape struct {
	root     int
	parent   []int // -1 at the root
	children [][]int
	height   []int
	depth    []int
}

// treeOrder is the order the trees are laid out in: the topology's ring
// order, or rank order without a topology.
func (c *Comm) treeOrder() []int {
	if c.topo != nil {
		if order, err := topology.RingOrder(*c.topo); err == nil {
			return order
		}
	}
	order := make([]int, c.Size())
	for i := range order {
		order[i] = i
	}
	return order
}

// trees returns the trees of an operation rooted at root, or of an
// AllReduce for root -1, on channels channels: two per channel, laid over
// the order rotated by tune.TreeShift and by one more. The communicator
// keeps the latest (shapeCache); nothing changes them once made.
func (c *Comm) trees(root, channels int) []treeShape {
	return c.shapes.get(root, channels, c.makeTrees)
}

// makeTrees makes the shapes trees returns.
func (c *Comm) makeTrees(root, channels int) []treeShape {
	n := c.Size()
	order := c.treeOrder()
	if root >= 0 { // the others, starting after the root
		i := slices.Index(order, root)
		order = append(slices.Clone(order[i+1:]), order[:i]...)
	}
	shapes := make([]treeShape, 0, 2*channels)
	for ch := range channels {
		for t := range 2 {
			shift := tune.TreeShift(len(order), ch, channels) + t
			pos := make([]int, len(order))
			for i := range pos {
				pos[i] = (i + shift) % len(order)
			}
			tr, err := topology.BinaryTree(pos)
			if err != nil {
				panic("collective: trees: " + err.Error()) // pos is a permutation
			}
			s := treeShape{root: order[tr.Root], parent: make([]int, n), children: make([][]int, n)}
			for i, p := range tr.Parent {
				s.parent[order[i]] = -1
				if p >= 0 {
					s.parent[order[i]] = order[p]
				}
				for _, ch := range tr.Children[i] {
					s.children[order[i]] = append(s.children[order[i]], order[ch])
				}
			}
			if root >= 0 {
				s.parent[s.root] = root
				s.parent[root] = -1
				s.children[root] = []int{s.root}
				s.root = root
			}
			s.measure()
			shapes = append(shapes, s)
		}
	}
	return shapes
}

// treeChannels returns the channels a tree operation of kind on bytes at
// root (-1 for AllReduce) runs on: Config.Channels, or where it is 0 the
// count the cost model predicts fastest for the topology and the size (1
// without a topology across hosts); fewer where a tree's part would be
// under a chunk (tune.TreeChannels). The operation's header carries it, so
// ranks whose Config.Channels differ fail with a mismatch.
func (c *Comm) treeChannels(kind Kind, bytes, root int) int {
	ch := c.cfg.Channels
	if ch == 0 {
		ch = max(1, c.modelChoose(kind, bytes, root).tree)
	}
	return tune.TreeChannels(ch, bytes, c.cfg.ChunkBytes)
}

// measure fills height and depth.
func (s *treeShape) measure() {
	n := len(s.parent)
	s.height, s.depth = make([]int, n), make([]int, n)
	order := []int{s.root}
	for i := 0; i < len(order); i++ {
		for _, ch := range s.children[order[i]] {
			s.depth[ch] = s.depth[order[i]] + 1
			order = append(order, ch)
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if p := s.parent[order[i]]; p >= 0 {
			s.height[p] = max(s.height[p], s.height[order[i]]+1)
		}
	}
}

// allReduceTree reduces up every tree and broadcasts down it, pipelined
// in chunks, on the channels of the header; each tree's root finishes
// (Avg) its part, so every rank gets the very same bits.
func (c *Comm) allReduceTree(o *operation, send, recv []byte, count int, spec reduceSpec) error {
	run := newTreeRun(o, c.trees(-1, int(max(1, o.hdr.channels))), send, recv, count, spec.dt.Size(), true, true)
	run.spec, run.avg = spec, spec.op == reduce.Avg
	return run.run()
}

// broadcastTree sends root's buf down every tree, a part down each.
func (c *Comm) broadcastTree(o *operation, buf []byte, root int) error {
	return newTreeRun(o, c.trees(root, int(max(1, o.hdr.channels))), nil, buf, len(buf), 1, false, true).run()
}

// reduceTree reduces a part of every rank's send up each tree into root's
// recv (the caller finishes Avg).
func (c *Comm) reduceTree(o *operation, send, recv []byte, root int, spec reduceSpec) error {
	run := newTreeRun(o, c.trees(root, int(max(1, o.hdr.channels))), send, recv, len(send)/spec.dt.Size(), spec.dt.Size(), true, false)
	run.spec = spec
	return run.run()
}
