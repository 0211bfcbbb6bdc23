package topology

import (
	"errors"
	"fmt"
)

// Tree is a rooted spanning tree over ranks 0..n-1, n = len(Parent), as
// used by reductions (leaves to root) and broadcasts (root to leaves).
type Tree struct {
	Root     int     // the rank with no parent
	Parent   []int   // Parent[r] is the parent of rank r, or -1 for Root
	Children [][]int // Children[r] lists the children of rank r; see each builder for the order
}

// Validate reports whether tr is a tree over 0..n-1 for n = len(tr.Parent),
// 1 <= n <= MaxRanks: Root is the only rank without a parent, Children is
// exactly the inverse of Parent, and every rank is reachable from Root.
// The error wraps ErrInvalid.
func (tr Tree) Validate() error {
	n := len(tr.Parent)
	switch {
	case n == 0:
		return invalidf("tree has no ranks")
	case n > MaxRanks:
		return invalidf("tree has %d ranks, more than the limit of %d", n, MaxRanks)
	case len(tr.Children) != n:
		return invalidf("tree has %d parents but %d child lists", n, len(tr.Children))
	case tr.Root < 0 || tr.Root >= n:
		return invalidf("tree root %d out of range [0, %d)", tr.Root, n)
	}
	for r, p := range tr.Parent {
		switch {
		case r == tr.Root && p != -1:
			return invalidf("tree root %d has parent %d", r, p)
		case r != tr.Root && (p < 0 || p >= n || p == r):
			return invalidf("rank %d has parent %d, not a rank in [0, %d) other than itself", r, p, n)
		}
	}
	listed := make([]bool, n)
	for p, children := range tr.Children {
		for _, c := range children {
			if c < 0 || c >= n || tr.Parent[c] != p {
				return invalidf("Children[%d] lists %d, whose parent is not %d", p, c, p)
			}
			if listed[c] {
				return invalidf("rank %d is listed as a child twice", c)
			}
			listed[c] = true
		}
	}
	for r := range n {
		if r != tr.Root && !listed[r] {
			return invalidf("rank %d is missing from Children[%d]", r, tr.Parent[r])
		}
	}
	if reached := len(tr.bfs()); reached != n {
		return invalidf("only %d of %d ranks are reachable from root %d (the parents form a cycle)", reached, n, tr.Root)
	}
	return nil
}

// bfs returns the ranks reachable from Root in breadth-first order, each
// once. It needs Children entries in range.
func (tr Tree) bfs() []int {
	seen := make([]bool, len(tr.Children))
	order := []int{tr.Root}
	seen[tr.Root] = true
	for i := 0; i < len(order); i++ {
		for _, c := range tr.Children[order[i]] {
			if !seen[c] {
				seen[c] = true
				order = append(order, c)
			}
		}
	}
	return order
}

// Depth returns the number of edges on the longest path from Root to a leaf
// of a valid tree: 0 for a single rank.
func (tr Tree) Depth() int {
	depth := make([]int, len(tr.Parent))
	deepest := 0
	for _, r := range tr.bfs() {
		for _, c := range tr.Children[r] {
			depth[c] = depth[r] + 1
			deepest = max(deepest, depth[c])
		}
	}
	return deepest
}

func newTree(n, root int) Tree {
	tr := Tree{Root: root, Parent: make([]int, n), Children: make([][]int, n)}
	tr.Parent[root] = -1
	return tr
}

func (tr *Tree) link(parent, child int) {
	tr.Parent[child] = parent
	tr.Children[parent] = append(tr.Children[parent], child)
}

// checkOrder checks that order is a permutation of 0..len(order)-1.
func checkOrder(order []int) error {
	n := len(order)
	if n == 0 {
		return invalidf("empty order")
	}
	if n > MaxRanks {
		return invalidf("order has %d ranks, more than the limit of %d", n, MaxRanks)
	}
	seen := make([]bool, n)
	for i, r := range order {
		if r < 0 || r >= n {
			return invalidf("order[%d]: rank %d out of range [0, %d)", i, r, n)
		}
		if seen[r] {
			return invalidf("order[%d]: rank %d appears twice", i, r)
		}
		seen[r] = true
	}
	return nil
}

// BinaryTree returns a balanced binary tree over the ranks of order, which
// must be a permutation of 0..n-1, laid out in order: for every rank, its
// left subtree holds ranks earlier in order and its right subtree later ones,
// and every subtree covers a contiguous run of order. So an order grouped by
// site, such as [RingOrder]'s, keeps most tree edges inside a site.
//
// The root is order[2^k-1] for the largest 2^k <= n. Every rank has at most
// two children, listed left then right, and the depth is at most k. Leaves
// include every rank at an even position of order (0, 2, 4, ...), so at
// most half of the ranks, those at odd positions, have children.
//
// BinaryTree returns an error wrapping ErrInvalid if order is not a
// permutation of 0..n-1 with 1 <= n <= MaxRanks.
func BinaryTree(order []int) (Tree, error) {
	if err := checkOrder(order); err != nil {
		return Tree{}, err
	}
	n := len(order)
	top := 1 // largest power of two <= n: the root's 1-based position
	for top*2 <= n {
		top *= 2
	}
	tr := newTree(n, order[top-1])
	for pos := 1; pos <= n; pos++ { // increasing, so children are listed left, right
		if pos != top {
			tr.link(order[inorderParent(pos, n)-1], order[pos-1])
		}
	}
	return tr, nil
}

// inorderParent returns the 1-based position of the parent of position pos
// in the in-order binary tree over positions 1..n, pos not the root. A
// position that is an odd multiple of 2^j sits at height j; its parent in
// the complete tree is the neighbour pos±2^j at height j+1. Positions beyond
// n do not exist, so the climb continues past them.
func inorderParent(pos, n int) int {
	for {
		low := pos & -pos
		if (pos/(2*low))%2 == 0 {
			pos += low
		} else {
			pos -= low
		}
		if pos <= n {
			return pos
		}
	}
}

// DoubleBinaryTree returns two binary trees over ranks 0..n-1 in which every
// rank has children in at most one tree, so it is a leaf in at least one.
// Splitting a message in half and reducing one half along each tree then
// gives every rank about the same sending and receiving work, as in NCCL's
// double binary tree.
//
// The first tree is BinaryTree(0, 1, ..., n-1), whose inner ranks are odd;
// the second is BinaryTree(1, 2, ..., n-1, 0), the same shape shifted by one
// rank, whose inner ranks are even. It returns an error wrapping ErrInvalid
// unless 1 <= n <= MaxRanks.
func DoubleBinaryTree(n int) ([2]Tree, error) {
	if n < 1 || n > MaxRanks {
		return [2]Tree{}, fmt.Errorf("%w: %d ranks, want 1 to %d", ErrInvalid, n, MaxRanks)
	}
	first, shifted := make([]int, n), make([]int, n)
	for i := range n {
		first[i] = i
		shifted[i] = (i + 1) % n
	}
	var trees [2]Tree
	var err [2]error
	trees[0], err[0] = BinaryTree(first)
	trees[1], err[1] = BinaryTree(shifted)
	if e := errors.Join(err[0], err[1]); e != nil {
		panic("topology: DoubleBinaryTree built an invalid order: " + e.Error())
	}
	return trees, nil
}
