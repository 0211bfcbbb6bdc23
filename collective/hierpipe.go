package collective

import (
	"cmp"
	"slices"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport"
)

// The hierarchical AllReduce, pipelined: the buffer is cut in pieces
// (hierPieces: up to 8, of at least 2 chunks, more in a large world; the
// first and last cut smaller, hierPieceBounds), and every piece runs the
// whole hierarchy of rings (reduce-scatter in each group, the shard
// owners' AllReduce one level up, all-gather back; see
// allReduceHierarchical), all pieces at once. So
// piece i's WAN exchange overlaps the inner reduce-scatters of the pieces
// after it and the all-gathers of those before it.
//
// One goroutine drives every ring of every piece. Every message gets a key
// that both its ends compute from the structure alone: a ring of a problem
// that starts at key b sends and receives step s's messages at key b+s
// (the top level's ring, over the shard owners of every site, at
// b+topStride*s, see there); a
// problem at level l starting at b runs its group's reduce-scatter from b,
// shard j's problem one level up from b+(p-1)+j*D(l+1) and the all-gather
// from b+(p-1)+p*D(l+1), where p is its largest group and D(l) bounds the
// keys any problem at level l spans; piece q adds q. A rank's rings of one
// piece span disjoint keys, so (class, key, piece, index) orders its
// messages on every pair the same way at both ends (the class, 0 for the
// start and 1 for the rest, depends on the piece, the ring and the step:
// hstage.class): receives are posted in that order, sends queued per peer
// in that order. A rank takes a receive once the receives that wrote its
// bytes before it are taken, whichever arrives first (hierpiperun.go), and
// posts a send as soon as the receives that last wrote the bytes it reads
// (the ring's previous step, or the lower level's receives of that chunk:
// hierdeps.go) have been taken and every send before it to the same peer
// is posted; a lower level's send of class 1 also waits until this rank's
// class 0 sends of the top level are posted (the start: hierStartPieces).
// So the levels overlap chunk by chunk, within a piece as well as across
// pieces, once the first piece has reached the top level. A send or
// receive depends only on receives before it in that order (within its
// piece, of lower keys, and a class 1 message's dependencies of class 0 or
// of a lower key) and a held send on sends of class 0 before it, so once
// every rank has waited for its receives before a message, the message is
// posted: no rank waits for one that cannot come (a rank blocked waits for
// its lowest receive not yet taken, among others).
//
// A ring of two members' AllReduce (the shard owners of two sites), in a
// call of at most tune.HierExchangeChunks chunks, is one exchange step instead
// of a reduce-scatter and an all-gather step: each sends its whole part
// of the piece, chunk by chunk, at key b, and reduces the peer's chunk
// (received in a chunk buffer) into its own once its send of that chunk
// is done, the lower rank's value first, so both compute the
// same bits. The same bytes cross each way, in one latency instead of two
// (tune's model counts one step). The send of key b waited for at the
// receive of key b does not break the argument above: the peer posts its
// receive of key b before waiting for it, and its receives before that one
// have lower keys.
//
// A receive is posted ahead while its memory is free: a reduce-scatter
// receive takes its bytes from a bounded ring of chunk buffers
// (hierArena), an all-gather
// receive lands where an earlier send of the group's reduce-scatter (or of
// the ring's own first half) read, and is posted once that send is done;
// the receive waited for next may wait for it (a send of a lower key).

// hierPieces is how many pieces an AllReduce of b bytes over ranks is cut
// in: the cost model's figure (tune.HierPieces), so that its prediction
// follows.
func hierPieces(b, chunkBytes, ranks int) int { return tune.HierPieces(b, chunkBytes, ranks) }

// topStride spaces the top level ring's steps: step s of piece q has key
// b+q+topStride*s, so that piece q+1's step s comes, on each pair, between
// piece q's steps s and s+1. A ring's step s+1 sends what its step s
// received (the reduce-scatter half's sum, then the all-gather half), a
// WAN latency and the left's send after its own step s: with steps one
// key apart, piece q+1's step s, queued after that send, waited for it,
// and every WAN connection stopped for that time between the halves of
// every piece (5-10 ms a piece over MetaRoCE, bench/results/wan_gap.md's
// "ring of two's halfway stall"); now the next piece's step fills it.
const topStride = 2

// hierAhead times the chunk buffers is how many receives a pipeline keeps
// posted beyond the lowest not taken: the arena (hierArena) bounds their
// bytes, this their count, which a ramp's small pieces would otherwise
// reach first (the lab grid's 64 MiB over MetaRoCE in virtual time, a
// ramp of 4 halvings at each end: 90.4 % of the WAN bound with 2, 92.4 %
// with 8; 86.8 % with a chunk buffer a receive and 2).
const hierAhead = 8

// hierArenaRings times a ring's lookahead (ringDepth: 32 MiB of chunk
// buffers by default) is the hierarchical pipeline's arena, at most one
// buffer per receive that lands in one. The lower levels run ahead of the
// top level only as far as the arena lets their receives be posted, and
// once the ramp's small pieces are through the WAN the first even piece's
// reduce-scatters must be done: with the ring's 32 MiB a 64 MiB call (64
// MiB of such receives a rank) ran out of it, and the WAN waited for the
// lower levels. The lab's 2 x 2 x 2 grid over MetaRoCE in virtual time,
// 64 MiB, seeds of 2 calls in four sittings (TestWANSimHierarchical,
// WAN_SIM_LOCAL_MBS 150: a site's shared memory and LAN at 600 MB/s, busy
// about as long as the WAN): 78.5 % of the WAN bound with 1 (11 seeds,
// 76.7-80.8), 82.0 % with 2 (14 seeds, 76.5-84.3), no better with 4 (at
// 300 MB/s, 3 seeds: 83.2 / 83.4 / 82.6 against 80.9 / 86.7 / 86.3;
// bench/results/wan_gap29.md).
// At 16 MiB the ring's lookahead already holds every such receive. The
// buffers come from, and go back to, the communicator's scratch pool
// (scratchKeepMax).
const hierArenaRings = 2

// hstage is one ring this rank takes part in, for one piece.
type hstage struct {
	piece  int
	key    int // step s's messages have key key+s*stride
	stride int
	kind   int // allSteps, reduceScatterSteps, allGatherSteps or exchangeStep
	n, r   int // ring size and the position its segment arithmetic uses
	left   int
	right  int
	g      geometry // offsets into the whole buffer
	steps  int
	sends  []transport.Request // by index
	pos    []int               // by index, the receive's place in the wait order
	rs     *hstage             // an all-gather's reduce-scatter (same group and segments)
	// Out of place only (nil otherwise; hierdeps.go sets them): by index,
	// the send reads the caller's send buffer (its bytes are this rank's
	// own contribution, not written in buf yet), and the receive's
	// reduction takes this rank's side from there, writing buf.
	srcSend, srcRecv []bool
}

// sendsSrc reports whether send i reads the caller's send buffer.
func (s *hstage) sendsSrc(i int) bool { return s.srcSend != nil && s.srcSend[i] }

// reducesSrc reports whether receive i's reduction reads this rank's side
// from the caller's send buffer.
func (s *hstage) reducesSrc(i int) bool { return s.srcRecv != nil && s.srcRecv[i] }

// stepKey is the key of step's messages.
func (s *hstage) stepKey(step int) int { return s.key + step*max(1, s.stride) }

func (s *hstage) total() int { return s.steps * s.g.k }

// rsReceive reports whether the receive of index i is reduced (into a
// chunk buffer first) rather than landing in place.
func (s *hstage) rsReceive(i int) bool {
	return s.kind == reduceScatterSteps || s.kind == exchangeStep || (s.kind == allSteps && i/s.g.k < s.n-1)
}

// slotReceive reports whether the receive of index i lands in a chunk
// buffer: a reduced one, and the all-gather half of a top-level ring,
// whose memory this rank's own send of the first half reads until the
// peer has it (a WAN round trip): landing in place, its receive, and with
// it every later one from that peer, could be posted only then, and the
// peer's sends of the next pieces would arrive unexpected. It is copied
// into place once that send is done.
func (s *hstage) slotReceive(i int) bool { return s.rsReceive(i) || s.kind == allSteps }

// segs returns the segments index i sends and receives.
func (s *hstage) segs(i int) (c, sendSeg, recvSeg int) {
	step, c := i/s.g.k, i%s.g.k
	if s.kind == exchangeStep {
		return c, 0, 0 // one segment: the whole part
	}
	if s.kind == allSteps && step >= s.n-1 {
		t := step - (s.n - 1)
		return c, mod(s.r+1-t, s.n), mod(s.r-t, s.n)
	}
	return c, mod(s.r-step, s.n), mod(s.r-step-1, s.n)
}

// hazard returns the send that read where receive i lands, or nil if
// none (it lands in a chunk buffer, or that send read the caller's send
// buffer) and whether there is one.
func (s *hstage) hazard(i int) (transport.Request, bool) {
	if s.rsReceive(i) {
		return nil, false
	}
	if s.kind == allSteps {
		j := i - (s.n-1)*s.g.k
		if s.sendsSrc(j) {
			return nil, false
		}
		return s.sends[j], true
	}
	if s.rs == nil {
		return nil, false
	}
	c, _, seg := s.segs(i)
	// The reduce-scatter (position r-1) sends segment r-1-step at step.
	step := mod(s.rs.r-seg, s.n)
	if step > s.n-2 {
		return nil, false // its own segment: never sent
	}
	if j := step*s.g.k + c; !s.rs.sendsSrc(j) {
		return s.rs.sends[j], true
	}
	return nil, false
}

// sendDep reports whether receive i, taken, waits for one of this ring's
// own sends (which must then be posted first): an exchange's receive for
// its send of the chunk, and the all-gather half of a top-level ring,
// landing in a chunk buffer, for the send that read where it is copied
// to (hazard).
func (s *hstage) sendDep(i int) bool {
	return s.kind == exchangeStep || (s.kind == allSteps && i/s.g.k >= s.n-1)
}

// sendWaiter returns the wait position of the receive that waits for send
// i (sendDep), or -1 if none does.
func (s *hstage) sendWaiter(i int) int {
	switch {
	case s.kind == exchangeStep:
		return s.pos[i]
	case s.kind == allSteps && i < (s.n-1)*s.g.k:
		return s.pos[i+(s.n-1)*s.g.k]
	}
	return -1
}

// hierPlan builds this rank's rings of piece q, region [lo, hi) of the
// buffer, in program order.
type hierPlan struct {
	h        *hier
	exchange bool  // rings of two run as one exchange (tune.HierExchange)
	d        []int // d[l]: the keys a problem entering level l may span
	stages   []*hstage
}

func (h *hier) newPlan() *hierPlan {
	n := h.o.c.Size()
	pl := &hierPlan{h: h, d: make([]int, len(h.levels)+1)}
	pl.d[len(h.levels)] = 2 * max(1, n-1) * topStride
	for l := len(h.levels) - 1; l >= 0; l-- {
		p := largestGroup(h.levels[l])
		pl.d[l] = 2*(p-1) + p*pl.d[l+1]
	}
	return pl
}

// largestGroup is the most ranks sharing a key.
func largestGroup(keys []string) int {
	count := map[string]int{}
	p := 1
	for _, k := range keys {
		count[k]++
		p = max(p, count[k])
	}
	return p
}

// add appends this rank's rings of the problem (members, level lvl) for
// every piece q, its region [regions[q][0], regions[q][1]) in bytes, from
// key base+q: the groups are found once for all pieces.
func (pl *hierPlan) add(members []int, lvl int, regions [][2]int, base int) {
	h := pl.h
	if len(members) == 1 {
		return
	}
	es := h.spec.dt.Size()
	if lvl == len(h.levels) {
		for q, r := range regions {
			pl.ring(q, members, allSteps, regionGeometry(r[0], r[1], len(members), es), base+q)
		}
		return
	}
	sp := h.split(members, lvl)
	if sp == nil {
		pl.add(members, lvl+1, regions, base)
		return
	}
	p, mine, me := sp.p, sp.mine, sp.me
	m := len(mine)
	shards := make([][]int, len(regions))
	segs := make([][]int, len(regions))
	rs := make([]*hstage, len(regions))
	for q, r := range regions {
		shards[q] = regionGeometry(r[0], r[1], p, es)
		segs[q] = make([]int, 0, m+1)
		for i := range m { // member i's shards, from its first
			segs[q] = append(segs[q], shards[q][sp.firstShard(i, m)])
		}
		segs[q] = append(segs[q], shards[q][p])
		rs[q] = pl.ring(q, mine, reduceScatterSteps, segs[q], base+q)
	}
	next := base + (p - 1)
	sub := make([][2]int, len(regions))
	for j := range p {
		if sp.owner(j, m) != me {
			continue
		}
		cross := make([]int, len(sp.groups))
		for i, g := range sp.groups {
			cross[i] = g[sp.owner(j, len(g))]
		}
		for q := range regions {
			sub[q] = [2]int{shards[q][j], shards[q][j+1]}
		}
		pl.add(cross, lvl+1, sub, next+j*pl.d[lvl+1])
	}
	for q := range regions {
		if ag := pl.ring(q, mine, allGatherSteps, segs[q], next+p*pl.d[lvl+1]+q); ag != nil {
			ag.rs = rs[q]
		}
	}
}

// regionGeometry returns the offsets of n even segments of [lo, hi).
func regionGeometry(lo, hi, n, es int) []int {
	off := newGeometry((hi-lo)/es, n, es, 0).off
	for i := range off {
		off[i] += lo
	}
	return off
}

// ring appends this rank's ring over members with segments at off.
func (pl *hierPlan) ring(q int, members []int, kind int, off []int, key int) *hstage {
	n := len(members)
	if n == 1 {
		return nil
	}
	me := indexOf(members, pl.h.o.c.rank)
	if kind == allSteps && n == 2 && pl.exchange {
		kind, off = exchangeStep, []int{off[0], off[len(off)-1]}
	}
	g := offsetGeometry(off, pl.h.spec.dt.Size(), pl.h.o.c.cfg.ChunkBytes)
	s := &hstage{piece: q, key: key, kind: kind, n: n, r: me, g: g,
		left: members[mod(me-1, n)], right: members[mod(me+1, n)]}
	switch kind {
	case allSteps:
		s.steps = 2 * (n - 1)
		s.stride = topStride
	case exchangeStep:
		s.steps = 1
	case reduceScatterSteps:
		s.steps, s.r = n-1, mod(me-1, n) // leaves segment r+1 at position r
	default:
		s.steps = n - 1
	}
	s.sends = make([]transport.Request, s.total())
	s.pos = make([]int, s.total())
	pl.stages = append(pl.stages, s)
	return s
}

// hrecv is one receive in the wait order; hsend one queued send.
// Each has the wait positions of the receives it depends on (hierdeps.go).
type hrecv struct {
	st   *hstage
	i    int
	key  int
	deps []int
}

type hsend struct {
	st   *hstage
	i    int
	key  int
	deps []int
}

// hevCompare orders message i of stage a, of key ka, against message j of
// stage b, of key kb: by class, key, piece and index.
func hevCompare(a *hstage, i, ka int, b *hstage, j, kb int) int {
	return cmp.Or(cmp.Compare(a.class(i), b.class(j)), cmp.Compare(ka, kb), cmp.Compare(a.piece, b.piece), cmp.Compare(i, j))
}

// hierPipe runs the rings of a plan.
type hierPipe struct {
	o       *operation
	spec    reduceSpec
	src     []byte // the caller's send buffer: buf when in place
	buf     []byte
	late    [][2]int // out of place, the byte ranges of buf no receive writes: copied from src at the end
	recvs   []hrecv
	pending []pendingRecv
	blockOf []int    // by wait position, its arena block or -1
	bufOf   [][]byte // by wait position, the arena's bytes it landed in
	arena   hierArena
	posted  int
	done    int
	queues  [][]hsend // by peer
	qhead   []int     // by peer, its next send to post
	peers   []int     // the peers with a queue
	ahead   int
	// startLeft counts this rank's start-class sends of the top level not
	// posted yet: until none, its held sends (hstage.held) wait.
	startLeft int
	waited    []bool // by wait position: waited for (done counts the prefix)
	rdy       hready // the ready receives (hierready.go)
	// next's scratch
	heads    []int
	headReqs []transport.Request
}

// hierPipeRan, set by tests only, is called with each pipeline that ran
// to its end, on the rank's goroutine.
var hierPipeRan func(*hierPipe)

// allReducePipelined all-reduces src into buf (the same memory in place,
// or disjoint; spec a sum-like op) in pieces pipelined through the
// hierarchy. Out of place, nothing is copied up front: a send of bytes no
// receive has written yet reads them from src, the first reduction into
// bytes of buf reads this rank's side from src (one pass, the same
// operands in the same order as in place, so the same bits), and the
// bytes no receive writes (none in a world of two or more, but the plan
// does not rely on it) are copied at the end (hierdeps.go).
func (h *hier) allReducePipelined(src, buf []byte) error {
	c := h.o.c
	es := h.spec.dt.Size()
	pl := h.newPlan()
	pl.exchange = tune.HierExchange(len(buf), c.cfg.ChunkBytes)
	pieces := hierPieceBounds(len(buf), c.cfg.ChunkBytes, c.Size(), es, c.hierRamp(len(buf)))
	regions := make([][2]int, len(pieces)-1)
	for q := range regions {
		regions[q] = [2]int{pieces[q], pieces[q+1]}
	}
	pl.add(allRanks(c.Size()), 0, regions, 0)
	if len(pl.stages) == 0 {
		copy(buf, src)
		return nil
	}
	p := &hierPipe{o: h.o, spec: h.spec, src: src, buf: buf, queues: make([][]hsend, c.Size()), qhead: make([]int, c.Size())}
	for _, s := range pl.stages {
		for i := range s.total() {
			p.recvs = append(p.recvs, hrecv{st: s, i: i, key: s.stepKey(i / s.g.k)})
		}
	}
	slices.SortFunc(p.recvs, func(a, b hrecv) int { return hevCompare(a.st, a.i, a.key, b.st, b.i, b.key) })
	nrs := 0
	for w, r := range p.recvs {
		r.st.pos[r.i] = w
		if r.st.slotReceive(r.i) {
			nrs++
		}
	}
	p.dependencies(pl.stages, regions)
	for peer, q := range p.queues {
		if len(q) > 0 {
			p.peers = append(p.peers, peer)
		}
		slices.SortFunc(q, func(a, b hsend) int { return hevCompare(a.st, a.i, a.key, b.st, b.i, b.key) })
		for _, e := range q {
			if e.st.opens(e.i) {
				p.startLeft++
			}
		}
	}
	nslots := max(1, min(nrs, hierArenaRings*ringDepth(c.cfg, nrs)))
	p.arena = hierArena{bufs: c.scratch.get(nslots), size: c.scratch.size}
	defer c.scratch.put(p.arena.bufs)
	p.ahead = hierAhead * nslots
	p.pending = make([]pendingRecv, len(p.recvs))
	p.blockOf = make([]int, len(p.recvs))
	p.bufOf = make([][]byte, len(p.recvs))
	p.waited = make([]bool, len(p.recvs))
	p.rdy.init(len(p.recvs), func(w int) int { return p.recvs[w].st.left },
		func(w int) []int { return p.recvs[w].deps }, func(w int) bool { return p.recvs[w].st.sendDep(p.recvs[w].i) })
	if err := p.run(); err != nil {
		return err
	}
	for _, r := range p.late {
		copy(buf[r[0]:r[1]], src[r[0]:r[1]])
	}
	if hierPipeRan != nil {
		hierPipeRan(p)
	}
	for _, s := range pl.stages { // before the caller writes where they read
		for _, r := range s.sends {
			if r != nil {
				if err := h.o.wait(r, s.right); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
