package tune

// chainParents is the chain from the root (rank root+i's parent is
// root+i-1), as one tree.
func (m *model) chainParents() [][]int {
	parent := make([]int, m.n)
	for r := range parent {
		parent[r] = (r - 1 + m.n) % m.n
	}
	parent[m.root] = -1
	return [][]int{parent}
}

// binomialParents is the binomial tree from the root (relative rank v's
// parent is v with its lowest set bit cleared), as one tree.
func (m *model) binomialParents() [][]int {
	parent := make([]int, m.n)
	for v := range parent {
		parent[(v+m.root)%m.n] = (v - v&-v + m.root) % m.n
	}
	parent[m.root] = -1
	return [][]int{parent}
}

// binomialDown is collective's binomial Broadcast: a rank, once it has the
// buffer, posts its sends to all its children at once (farthest first),
// so they share its links: each child has the buffer when its parent had
// it, plus the link's latency, plus the busiest link's load of all the
// parent's sends (every transfer of a rank at once, as a phase of its
// own). The operation ends when the last rank has it, or later where the
// transfers of several ranks share a link (the busiest link's load of all
// of them).
func (m *model) binomialDown() []phase {
	parent := m.binomialParents()[0]
	sends := make([][]flow, m.n)
	all := phase{overlap: true}
	for x, p := range parent {
		if p >= 0 {
			sends[p] = append(sends[p], flow{p, x, m.bytes, 0})
			all.flows = append(all.flows, flow{p, x, m.bytes, 0})
		}
	}
	at := make([]float64, m.n)
	queue := []int{m.root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		load := m.time(phase{flows: sends[p]})
		for _, f := range sends[p] {
			at[f.dst] = at[p] + m.alpha(p, f.dst) + load
			all.lat = max(all.lat, at[f.dst])
			queue = append(queue, f.dst)
		}
	}
	all.steps = bits(m.n)
	return []phase{all}
}

// binomialUp is collective's binomial Reduce: the rounds of binomial()
// backwards, whose bytes take their turns (a rank combines its children's
// results one after the other), but whose latencies overlap: a rank sends
// its subtree's result as soon as it has it, and its parent has posted
// the receive (a partner on another site gets the parent's header at the
// parent's first wait, collective's touchFarPartners), so the latencies
// cost only the tree's longest path up, as a phase of their own. (Priced
// round by round, a Reduce over three sites paid a WAN latency per round
// that crosses it, one more than its messages take: 8 B on 3 x 2 x 2,
// model 8.05 ms against gocoll sim's 6.05.)
func (m *model) binomialUp() []phase {
	phases := m.binomial()
	for i := range phases {
		phases[i].lat = 0
	}
	at := m.arrivals(m.binomialParents()[0], true)
	return append(phases, phase{lat: at[m.root]})
}

// bits is ceil(log2 n): the rounds of a binomial tree over n ranks.
func bits(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}
