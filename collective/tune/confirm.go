package tune

import "slices"

// confirm is the round that ends every forced Broadcast and Reduce
// (collective's operation.confirm): a dissemination among all ranks in
// rank order, ceil(log2 n) rounds of empty messages (only the operation
// header); in round j rank r sends to r+2^j and goes on to round j+1 once
// the message from r-2^j has come. Each rank enters it when its part of
// the operation ends, at done[r] seconds (the operation's data phases end
// at the latest of them); the round's phase is the time from there to the
// end of the longest path of such hops, by dynamic programming over the
// rounds: on ranks numbered site by site, the rounds of the larger
// distances cross the WAN from every rank, and even those of distance 1
// cross it at the sites' edges. The automatic small Broadcast and Reduce
// (a dissemination and a recursive doubling) have no such round.
func (m *model) confirm(done []float64) phase {
	n := m.n
	ph := phase{}
	cur, next := slices.Clone(done), make([]float64, n)
	for d := 1; d < n; d <<= 1 {
		ph.steps++
		for r := range n {
			from := (r - d + n) % n
			ph.flows = append(ph.flows, flow{from, r, 0, 0})
			next[r] = max(cur[r], cur[from]+m.alpha(from, r))
		}
		cur, next = next, cur
	}
	ph.lat = max(0, slices.Max(cur)-slices.Max(done))
	return ph
}

// confirmed returns the data phases of a rooted operation followed by the
// confirm round. The operation moves its data along the trees parents
// (each rank's parent, -1 at the operation's root): down from the root
// (Broadcast) or up to it (Reduce, up). A rank's part ends, in latencies,
// when its data has come down its path from the root; going up, when its
// last child's data has come up its subtree, or, where it waits for its
// own send (waits: the binomial Reduce), once that has landed; the root of
// a Broadcast and the leaves going up (which only post sends) at once.
// The bandwidth part of the data phases is taken to delay every other
// rank alike, so the latest rank ends with the data phases.
func (m *model) confirmed(phases []phase, parents [][]int, up, waits bool) []phase {
	if m.n < 2 {
		return phases
	}
	var end float64
	for _, p := range phases {
		end += m.time(p)
	}
	done := make([]float64, m.n)
	for _, parent := range parents {
		at := m.arrivals(parent, up)
		for x, p := range parent {
			switch {
			case !up && p >= 0, up && p < 0:
				done[x] = max(done[x], at[x])
			case up && waits:
				done[x] = max(done[x], at[x]+m.alpha(x, p))
			case up && at[x] > 0: // an inner rank
				done[x] = max(done[x], at[x])
			}
		}
	}
	shift := end - slices.Max(done)
	for x := range done {
		if done[x] > 0 {
			done[x] += shift
		}
	}
	return append(phases, m.confirm(done))
}

// arrivals returns, for each rank of the tree parent, when (in latencies
// alone) its data has come: down from the root, or up from the farthest
// leaf of its subtree (0 at the leaves).
//
// Each rank's figure comes from its parent's (down) or its children's
// (up) in one pass from the root down (order), not by walking every
// rank's path, which on a chain of n ranks took n²/2 steps (review B16
// F3); the sums are the same, added in the same order, and adding one
// latency to the largest of the paths' sums is the largest of the sums
// with it, so the figures are the walk's exactly.
func (m *model) arrivals(parent []int, up bool) []float64 {
	at := make([]float64, m.n)
	order := treeOrder(parent)
	if !up {
		for _, x := range order { // x's path from the root: its parent's, then one hop
			if p := parent[x]; p >= 0 {
				at[x] = at[p] + m.alpha(p, x)
			}
		}
		return at
	}
	for _, x := range slices.Backward(order) { // each child's latest arrival before its parent's
		if p := parent[x]; p >= 0 {
			at[p] = max(at[p], at[x]+m.alpha(x, p))
		}
	}
	return at
}

// treeOrder returns the ranks of the forest parent (each rank's parent,
// -1 at a root) parents before children: roots first, then breadth first.
func treeOrder(parent []int) []int {
	n := len(parent)
	first, next := make([]int, n), make([]int, n) // children lists: first child, next sibling (+1, 0: none)
	order := make([]int, 0, n)
	for x := n - 1; x >= 0; x-- {
		if p := parent[x]; p >= 0 {
			next[x], first[p] = first[p], x+1
		} else {
			order = append(order, x)
		}
	}
	slices.Reverse(order)
	for i := 0; i < len(order); i++ {
		for c := first[order[i]]; c > 0; c = next[c-1] {
			order = append(order, c-1)
		}
	}
	return order
}
