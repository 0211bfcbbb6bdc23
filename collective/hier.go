package collective

import (
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// allReduceHierarchical follows the levels of the topology, innermost
// first (ranks of a host, hosts of a site, sites): at a level whose groups
// differ, the members of each group reduce-scatter the buffer among
// themselves, every shard's owners (one per group) all-reduce it across
// the groups, recursively over the outer levels and all at once, and each
// group all-gathers the result. So each site's shard owners cross to the
// other sites at the same time, on connections of their own, and the
// buffer crosses between sites once each way. The buffer is cut in
// pieces that go through the levels pipelined (hierpipe.go).
//
// Levels may be uneven: with P the largest group, the buffer is cut in P
// shards and a group of m members gives member i the shards j with
// j*m/P == i, contiguous, so a smaller group's members own more shards
// and take part in one cross-group AllReduce per shard, in shard order.
// Groups and members are ordered by communicator rank, whatever the
// numbering of sites. Without a topology it is a ring.
//
// Out of place, send is not copied to recv first: a rank's own
// contribution is read from send where it is still unreduced
// (hierPipe.src).
func (c *Comm) allReduceHierarchical(o *operation, send, recv []byte, spec reduceSpec) error {
	sum := spec
	if spec.op == reduce.Avg {
		sum.op = reduce.Sum // divided once, by the world size, at the end
	}
	h := c.newHier(o, sum)
	if err := h.allReducePipelined(send, recv); err != nil {
		return err
	}
	return finishAvg(spec, recv, c.Size())
}

// newHier returns the levels of the communicator's topology (none
// without one: a ring) for an operation reducing with spec.
func (c *Comm) newHier(o *operation, spec reduceSpec) *hier {
	h := &hier{o: o, spec: spec}
	if c.topo != nil {
		host, site := make([]string, c.Size()), make([]string, c.Size())
		for r := range c.Size() {
			ri := c.topo.Ranks[r] // sorted by rank
			host[r], site[r] = ri.Host, ri.SiteName()
		}
		h.levels = [][]string{host, site}
	}
	return h
}

// allRanks returns 0, 1, ..., n-1.
func allRanks(n int) []int {
	members := make([]int, n)
	for i := range members {
		members[i] = i
	}
	return members
}

type hier struct {
	o      *operation
	spec   reduceSpec
	levels [][]string // per level, innermost first, each rank's group key
}

// Phases of a ring over a group.
const (
	allSteps = iota
	reduceScatterSteps
	allGatherSteps
	exchangeStep // a ring of two's AllReduce as one exchange (hierpipe.go)
)

// ringOver runs a ring over members with segment i of buf at off[i]:
// [off[i], off[i+1]) ends up reduced at member i after the reduce-scatter
// steps, and everywhere after the all-gather steps. It waits for its sends,
// so that the next phase may write where they read.
func (h *hier) ringOver(members []int, off []int, buf []byte, phase int) error {
	return h.ringOverFrom(members, off, buf, buf, phase)
}

// ringOverFrom is ringOver reducing from src (read only, as long as buf)
// into buf: the first step sends and reduces straight from src, so an
// out-of-place reduction needs no copy of src first. The all-gather
// steps take src == buf.
func (h *hier) ringOverFrom(members []int, off []int, src, buf []byte, phase int) error {
	return h.ringOverWith(members, off, src, buf, phase, nil)
}

// ringOverWith is ringOverFrom with the schedule given by wrap (nil: the
// ring's own: an *allGatherRing for the all-gather steps, else an
// *allReduceRing), which takes it and returns the one to run.
func (h *hier) ringOverWith(members []int, off []int, src, buf []byte, phase int, wrap func(ringSchedule) ringSchedule) error {
	n := len(members)
	if n == 1 {
		return nil
	}
	me := indexOf(members, h.o.c.rank)
	g := offsetGeometry(off, h.spec.dt.Size(), h.o.c.cfg.ChunkBytes)
	steps := map[int]int{allSteps: 2 * (n - 1), reduceScatterSteps: n - 1, allGatherSteps: n - 1}[phase]
	rg := &ring{o: h.o, left: members[mod(me-1, n)], right: members[mod(me+1, n)], steps: steps, k: g.k,
		depth: ringDepth(h.o.c.cfg, g.k), sends: make([]transport.Request, steps*g.k)}
	var err error
	switch phase {
	case allGatherSteps:
		var s ringSchedule = &allGatherRing{g: g, n: n, r: me, recv: buf}
		if wrap != nil {
			s = wrap(s)
		}
		err = rg.run(s)
	default:
		r := me
		if phase == reduceScatterSteps {
			r = mod(me-1, n) // the reduce-scatter leaves segment r+1 at rank r
		}
		a := &allReduceRing{g: g, n: n, r: r, send: src, recv: buf, spec: h.spec, ring: rg}
		rg.depth = allReduceRingDepth(rg.depth, n, g.k) // see there: the headers may have gone in an earlier phase
		bufs := h.o.c.scratch.get(rg.depth)
		defer h.o.c.scratch.put(bufs)
		a.tmp = bufs
		var s ringSchedule = a
		if wrap != nil {
			s = wrap(a)
		}
		err = rg.run(s)
	}
	if err != nil {
		return err
	}
	for _, s := range rg.sends {
		if s != nil {
			if err := h.o.wait(s, rg.right); err != nil {
				return err
			}
		}
	}
	return nil
}

// levelSplit is how a level of the topology divides members: into groups
// (in order of their first member), p the largest group's size, and this
// rank's group, mine, at index me. The buffer (or the blocks) is cut in p
// shards (slots), and a group of m members gives member i the shards j
// with owner(j, m) == i, contiguous: the first is firstShard(i, m).
type levelSplit struct {
	groups [][]int
	p      int
	mine   []int
	me     int
}

// split returns how level lvl divides members, or nil when it does not
// (one group, or groups of one).
func (h *hier) split(members []int, lvl int) *levelSplit {
	s := &levelSplit{groups: topology.GroupBy(members, h.levels[lvl]), me: -1}
	for _, g := range s.groups {
		s.p = max(s.p, len(g))
		if i := indexOf(g, h.o.c.rank); i >= 0 {
			s.mine, s.me = g, i
		}
	}
	if len(s.groups) == 1 || s.p == 1 {
		return nil
	}
	return s
}

// owner is the member of a group of m that holds shard j.
func (s *levelSplit) owner(j, m int) int { return j * m / s.p }

// firstShard is the first shard member i of a group of m holds: the
// smallest j with owner(j, m) == i.
func (s *levelSplit) firstShard(i, m int) int { return (i*s.p + m - 1) / m }

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
