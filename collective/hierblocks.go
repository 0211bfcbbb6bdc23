package collective

import (
	"sort"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// Hierarchical ReduceScatter, AllGather and Broadcast follow the levels of
// the topology as allReduceHierarchical does. At a level whose groups
// differ (P the largest group), every block is given to one of P slots: a
// group of m members gives member i the slots j with j*m/P == i, and a
// rank's block goes to the first slot that rank holds. The ranks that
// hold slot j, one per group, form slot j's cross set. ReduceScatter
// reduces within each group (a ring reduce-scatter whose segment i is the
// blocks of member i's slots), then every cross set reduce-scatters its
// slot among itself over the outer levels, all cross sets at once;
// AllGather does the reverse. So a block crosses between two groups once,
// and every group's members cross at the same time, on connections of
// their own. Broadcast scatters the root's buffer in n shards, one per
// rank, and all-gathers them so.

// blockPlan is one level's regrouping of the blocks of members.
type blockPlan struct {
	mine   []int   // this rank's group
	segs   []int   // byte offsets in packed of each member of mine's slots, and the end
	slot   []int   // byte offset in packed of each slot, and the end
	cross  [][]int // per slot, its cross set, in group order
	sizes  [][]int // per slot, the bytes of each cross member's block there (0 if elsewhere)
	owned  []int   // the slots this rank holds
	first  int     // the slot this rank's own block is in
	place  []int   // per member (as in members), its block's offset in packed
	offset []int   // per member, its block's offset in the caller's data
	size   []int   // per member, its block's bytes
	order  []packedBlock
}

// packedBlock is a member's block in packed order: at in packed, from in
// the caller's data.
type packedBlock struct{ at, from, size int }

// spans calls f with each part of [lo, hi) in packed that lies in one
// block, and that part's offset in the caller's data.
func (pl *blockPlan) spans(lo, hi int, f func(lo, hi, from int)) {
	i := sort.Search(len(pl.order), func(i int) bool { return pl.order[i].at+pl.order[i].size > lo })
	for ; i < len(pl.order) && pl.order[i].at < hi; i++ {
		b := pl.order[i]
		if x, y := max(lo, b.at), min(hi, b.at+b.size); x < y {
			f(x, y, b.from+x-b.at)
		}
	}
}

// plan regroups the blocks of members (of sizes bytes each, in member
// order) at level lvl, or returns nil when the level does not divide them.
func (h *hier) plan(members, sizes []int, lvl int) *blockPlan {
	sp := h.split(members, lvl)
	if sp == nil {
		return nil
	}
	p := sp.p
	pos := make(map[int]int, len(members)) // rank -> index in members
	pl := &blockPlan{offset: make([]int, len(members)+1), size: sizes, place: make([]int, len(members))}
	for i, r := range members {
		pos[r] = i
		pl.offset[i+1] = pl.offset[i] + sizes[i]
	}
	at := 0
	for j := range p {
		pl.slot = append(pl.slot, at)
		var cross, sz []int
		for _, g := range sp.groups {
			i := sp.owner(j, len(g))
			x, s := g[i], 0
			if sp.firstShard(i, len(g)) == j {
				s = sizes[pos[x]]
				pl.place[pos[x]] = at
				pl.order = append(pl.order, packedBlock{at: at, from: pl.offset[pos[x]], size: s})
				at += s
			}
			cross, sz = append(cross, x), append(sz, s)
		}
		pl.cross, pl.sizes = append(pl.cross, cross), append(pl.sizes, sz)
	}
	pl.slot = append(pl.slot, at)
	if sp.me >= 0 {
		m := len(sp.mine)
		pl.mine = sp.mine
		for k := range m {
			pl.segs = append(pl.segs, pl.slot[sp.firstShard(k, m)])
		}
		pl.segs = append(pl.segs, at)
		pl.first = sp.firstShard(sp.me, m)
		for j := pl.first; j < p && sp.owner(j, m) == sp.me; j++ {
			pl.owned = append(pl.owned, j)
		}
	}
	return pl
}

// pack copies the blocks of data (in member order) to their places in
// packed; unpack copies them back.
func (pl *blockPlan) pack(packed, data []byte) {
	for i, s := range pl.size {
		copy(packed[pl.place[i]:pl.place[i]+s], data[pl.offset[i]:pl.offset[i]+s])
	}
}

func (pl *blockPlan) unpack(data, packed []byte) {
	for i, s := range pl.size {
		copy(data[pl.offset[i]:pl.offset[i]+s], packed[pl.place[i]:pl.place[i]+s])
	}
}

// reduceScatter reduces, over members, data: their blocks of sizes bytes
// each, in member order; this rank's reduced block goes to out. It works
// in data unless keep is set (the caller's send), when data is only read.
func (h *hier) reduceScatter(members, sizes []int, lvl int, data []byte, keep bool, out []byte) error {
	me := indexOf(members, h.o.c.rank)
	if len(members) == 1 {
		copy(out, data)
		return nil
	}
	var pl *blockPlan
	for ; lvl < len(h.levels) && pl == nil; lvl++ {
		pl = h.plan(members, sizes, lvl)
	}
	if pl == nil {
		off := offsets(sizes)
		work := data
		if keep {
			lent := h.o.c.tempBuffer(len(data))
			defer lent.release()
			work = lent.buf[:len(data)]
		}
		if err := h.ringOverFrom(members, off, data, work, reduceScatterSteps); err != nil {
			return err
		}
		copy(out, work[off[me]:off[me+1]])
		return nil
	}
	lent := h.o.c.tempBuffer(len(data))
	defer lent.release()
	packed := lent.buf[:len(data)]
	if len(pl.mine) == 1 { // no ring here: the levels above take every slot
		pl.pack(packed, data)
	} else if err := h.ringOverWith(pl.mine, pl.segs, nil, packed, reduceScatterSteps, func(s ringSchedule) ringSchedule {
		return &packedReduceScatter{allReduceRing: s.(*allReduceRing), pl: pl, data: data}
	}); err != nil {
		return err
	}
	for _, j := range pl.owned {
		var dst []byte // this rank's block is in its first slot only
		if j == pl.first {
			dst = out
		}
		if err := h.reduceScatter(pl.cross[j], pl.sizes[j], lvl, packed[pl.slot[j]:pl.slot[j+1]], false, dst); err != nil {
			return err
		}
	}
	return nil
}

// packedReduceScatter is a level's reduce-scatter ring over the packed
// blocks (blockPlan, the ring's recv) that reads this rank's own blocks
// where they lie in the caller's data instead of from a packed copy made
// up front: its first step sends a chunk straight from data when the chunk
// lies in one block (else packs just that chunk, into a segment this ring
// never receives into), and each reduction takes this rank's side from
// data, block part by part (the same operands in the same order: the same
// bits). The packed segments it reduces into are written whole.
type packedReduceScatter struct {
	*allReduceRing
	pl   *blockPlan
	data []byte
}

func (a *packedReduceScatter) sendBuf(i int) []byte {
	step, c, seg, _ := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if step > 0 || lo == hi {
		return a.recv[lo:hi]
	}
	var whole []byte
	a.pl.spans(lo, hi, func(x, y, from int) {
		if x == lo && y == hi {
			whole = a.data[from : from+hi-lo]
			return
		}
		copy(a.recv[x:y], a.data[from:from+y-x])
	})
	if whole != nil {
		return whole
	}
	return a.recv[lo:hi]
}

func (a *packedReduceScatter) afterRecv(i int) error {
	step, c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	t := a.tmp[i%len(a.tmp)][:hi-lo]
	a.pl.spans(lo, hi, func(x, y, from int) {
		a.spec.kernel(a.recv[x:y], a.data[from:from+y-x], t[x-lo:y-lo])
	})
	if step == a.n-2 && a.spec.op == reduce.Avg {
		return reduce.DivideBy(a.spec.dt, a.recv[lo:hi], a.n)
	}
	return nil
}

// allGather gathers, over members, data: their blocks of sizes bytes each,
// in member order, this rank's already in its place.
func (h *hier) allGather(members, sizes []int, lvl int, data []byte) error {
	me := indexOf(members, h.o.c.rank)
	if len(members) == 1 {
		return nil
	}
	var pl *blockPlan
	for ; lvl < len(h.levels) && pl == nil; lvl++ {
		pl = h.plan(members, sizes, lvl)
	}
	if pl == nil {
		return h.ringOver(members, offsets(sizes), data, allGatherSteps)
	}
	lent := h.o.c.tempBuffer(len(data))
	defer lent.release()
	packed := lent.buf[:len(data)]
	copy(packed[pl.place[me]:pl.place[me]+sizes[me]], data[pl.offset[me]:pl.offset[me+1]])
	for _, j := range pl.owned {
		if err := h.allGather(pl.cross[j], pl.sizes[j], lvl, packed[pl.slot[j]:pl.slot[j+1]]); err != nil {
			return err
		}
	}
	if len(pl.mine) == 1 { // no ring here: every slot came from the levels above
		pl.unpack(data, packed)
		return nil
	}
	return h.ringOverWith(pl.mine, pl.segs, packed, packed, allGatherSteps, func(s ringSchedule) ringSchedule {
		return &packedAllGather{allGatherRing: s.(*allGatherRing), pl: pl, data: data}
	})
}

// packedAllGather is a level's all-gather ring over the packed blocks
// (blockPlan, the ring's recv) that leaves every block in its place in the
// caller's data as it goes instead of copying packed back whole at the
// end: a chunk that lies in one block is received straight into data (and
// forwarded from there), one that spans blocks lands in packed and is
// copied out once it has arrived, and this rank's own segment (from the
// levels above, in packed) is copied out chunk by chunk as the first
// step's messages arrive.
type packedAllGather struct {
	*allGatherRing
	pl   *blockPlan
	data []byte
}

// inData returns where [lo, hi) of packed lies in data when it lies in
// one block.
func (a *packedAllGather) inData(lo, hi int) ([]byte, bool) {
	var whole []byte
	a.pl.spans(lo, hi, func(x, y, from int) {
		if x == lo && y == hi {
			whole = a.data[from : from+hi-lo]
		}
	})
	return whole, whole != nil
}

// unpack copies [lo, hi) of packed to its places in data.
func (a *packedAllGather) unpack(lo, hi int) {
	a.pl.spans(lo, hi, func(x, y, from int) { copy(a.data[from:from+y-x], a.recv[x:y]) })
}

func (a *packedAllGather) sendBuf(i int) []byte {
	c, seg, _ := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if i >= a.g.k { // forwards what arrived a step earlier, where it landed
		if d, ok := a.inData(lo, hi); ok {
			return d
		}
	}
	return a.recv[lo:hi]
}

func (a *packedAllGather) recvBuf(i int) ([]byte, error) {
	c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if d, ok := a.inData(lo, hi); ok {
		return d, nil
	}
	return a.recv[lo:hi], nil
}

func (a *packedAllGather) afterRecv(i int) error {
	c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if _, ok := a.inData(lo, hi); !ok {
		a.unpack(lo, hi)
	}
	if i < a.g.k { // this rank's own chunk c, sent at the first step
		_, own, _ := a.segs(i)
		a.unpack(a.g.span(own, c))
	}
	return nil
}

// offsets returns the running sums of sizes, from 0.
func offsets(sizes []int) []int {
	off := make([]int, len(sizes)+1)
	for i, s := range sizes {
		off[i+1] = off[i] + s
	}
	return off
}

// reduceScatterHierarchical: send holds every rank's block of len(recv)
// bytes in rank order.
func (c *Comm) reduceScatterHierarchical(o *operation, send, recv []byte, spec reduceSpec) error {
	sum := spec
	if spec.op == reduce.Avg {
		sum.op = reduce.Sum // divided once, by the world size, at the end
	}
	sizes := make([]int, c.Size())
	for i := range sizes {
		sizes[i] = len(recv)
	}
	if err := c.newHier(o, sum).reduceScatter(allRanks(c.Size()), sizes, 0, send, true, recv); err != nil {
		return err
	}
	return finishAvg(spec, recv, c.Size())
}

// allGatherHierarchical: recv holds this rank's block of len(recv)/n bytes
// in its place.
func (c *Comm) allGatherHierarchical(o *operation, recv []byte, dt dtype.DataType) error {
	n := c.Size()
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = len(recv) / n
	}
	return c.newHier(o, reduceSpec{dt: dt}).allGather(allRanks(n), sizes, 0, recv)
}

// broadcastHierarchical: the root sends rank r its shard r of buf, and the
// shards are all-gathered hierarchically.
func (c *Comm) broadcastHierarchical(o *operation, buf []byte, root int, dt dtype.DataType) error {
	n := c.Size()
	off := newGeometry(len(buf)/esize(dt), n, esize(dt), 0).off
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = off[i+1] - off[i]
	}
	if c.rank == root {
		sends := make([]transport.Request, n)
		for r := range n {
			if r != root {
				sends[r] = o.send(r, buf[off[r]:off[r+1]])
			}
		}
		for r, s := range sends { // before the all-gather writes where they read
			if s != nil {
				if err := o.wait(s, r); err != nil {
					return err
				}
			}
		}
	} else if err := o.waitRecv(o.recv(root, buf[off[c.rank]:off[c.rank+1]])); err != nil {
		return err
	}
	return c.newHier(o, reduceSpec{dt: dt}).allGather(allRanks(n), sizes, 0, buf)
}
