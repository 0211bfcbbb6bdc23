package collective

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport"
)

// treeRun is one rank's part of a pipelined operation on trees (two per
// channel): part t of the buffer, in chunks (tune.TreeChunk: at least
// tune.TreeChunksMin of them where that keeps a chunk at a
// tune.TreeChunkDiv-th of Config.ChunkBytes or more, so that a part of one or two of the
// transport's chunks still pipelines), goes up tree t (reduced at
// every inner rank) and/or down it (forwarded by every inner rank).
//
// Every message gets a step: chunk c leaves a rank of height h upward at
// step c+h, after its children's copies (steps c+h(child) < c+h), and
// leaves a rank of depth d downward at step c+base+d. A rank's events,
// sorted by (step, combine < send < receive, tree, chunk, peer), are its
// canonical order. Both ends of a message know its step and tree, and no
// pair exchanges two messages one way at the same step of one tree, so
// each pair's sends and receives are posted in that order: receives all in
// it, at most ahead of them beyond the first not yet waited for, and a
// send only once every earlier send to its peer is posted.
//
// A tree's events form two streams, its way up (receives from children,
// combines, sends to the parent) and its way down (the receive from the
// parent, sends to children); each stream's events run in their order, but
// the streams run apart: a rank runs whichever stream can go on (its next
// receive has arrived, or its next send's turn to its peer has come; the
// root sends a chunk down once it has combined it), and waits for the
// first of the streams' next receives to arrive (awaitAny). So a chunk
// that is late on one tree (its path crossed a busy link) holds back only
// that tree, not the forwarding of the others' chunks (gocoll sim, 256
// ranks, Broadcast on 4 channels: a rank forwarding one tree's chunks over
// the WAN waited 63 ms a step for two other trees' chunks, and the WAN
// link idled a third of the time), and a chunk's way down, a round trip
// to the root behind its way up, does not hold back the later chunks'
// way up (the two-site lab's 4 MiB AllReduce over MetaRoCE in virtual
// time: a rank above a leaf sent its third chunk up only once its first
// came back down, 20 ms later). No rank waits for a message that cannot
// come: the first event not yet run in canonical order can always run but
// for a receive's arrival, and such a receive, at step s, is of a message
// its sender posts after its own steps below s; so in the end every rank
// runs every event.
type treeRun struct {
	o          *operation
	x          int // this rank
	trees      []treeShape
	send, recv []byte
	spec       reduceSpec
	up, down   bool
	avg        bool // the roots divide their halves by n (AllReduce Avg)
	inPlace    bool
	g          geometry     // segment t is tree t's part
	d          int          // chunks per child slot ring: more than the trees' height
	slots      [][][][]byte // [tree][child][chunk % d], children's partial sums
	upSends    [][]transport.Request
	combined   []int // chunks combined so far, per tree (in chunk order)
	events     []treeEvent
	streams    [][]int       // each stream's events (indices into events), in order
	next       []int         // per stream, its next event in streams
	left       int           // events not yet run
	recvs      []int         // indices into events of the receives, in order
	pending    []pendingRecv // by receive ordinal
	waited     []bool        // by receive ordinal
	low        int           // the first receive ordinal not waited for
	posted     int           // receives posted so far
	ahead      int           // most receives posted from low on
	cands      []transport.Request
}

type treeEvent struct {
	key, kind, t, c, peer int
	child                 int // an upward receive's child index, else -1
	up                    bool
	ord                   int // a receive's ordinal; a send's previous send to peer (index into events), or -1
	done                  bool
}

// stream is the run order event e belongs to: a tree's way up (its
// receives from children, combines and sends to the parent) or its way
// down (the receives from the parent and sends to children).
func (e *treeEvent) stream() int {
	if e.up {
		return 2 * e.t
	}
	return 2*e.t + 1
}

const (
	evCombine = iota
	evSend
	evRecv
)

func newTreeRun(o *operation, trees []treeShape, send, recv []byte, count, esize int, up, down bool) *treeRun {
	r := &treeRun{o: o, x: o.c.rank, trees: trees, send: send, recv: recv, up: up, down: down,
		inPlace: sameRegion(send, recv), g: newGeometry(count, len(trees), esize, tune.TreeChunk(count*esize/max(1, len(trees)), o.c.cfg.ChunkBytes)),
		slots: make([][][][]byte, len(trees)), upSends: make([][]transport.Request, len(trees)), combined: make([]int, len(trees))}
	k := r.g.k
	r.d = o.c.cfg.PipelineDepth
	for _, s := range trees {
		r.d = max(r.d, s.height[s.root]+1)
	}
	for t := range trees {
		r.upSends[t] = make([]transport.Request, k)
		r.addEvents(t)
	}
	slices.SortFunc(r.events, func(a, b treeEvent) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.kind, b.kind), cmp.Compare(a.t, b.t),
			cmp.Compare(a.c, b.c), cmp.Compare(a.peer, b.peer))
	})
	r.streams, r.next, r.left = make([][]int, 2*len(trees)), make([]int, 2*len(trees)), len(r.events)
	// The streams share one backing array, each cut to its length (counted
	// in r.next first), so listing them allocates once, not per growth.
	for i := range r.events {
		r.next[r.events[i].stream()]++
	}
	all, off := make([]int, len(r.events)), 0
	for s, n := range r.next {
		r.streams[s], off, r.next[s] = all[off:off:off+n], off+n, 0
	}
	var last [][2]int // (peer, its last send so far)
	for i := range r.events {
		e := &r.events[i]
		r.streams[e.stream()] = append(r.streams[e.stream()], i)
		switch e.kind {
		case evRecv:
			e.ord = len(r.recvs)
			r.recvs = append(r.recvs, i)
		case evSend:
			e.ord = -1
			j := slices.IndexFunc(last, func(l [2]int) bool { return l[0] == e.peer })
			if j < 0 {
				last = append(last, [2]int{e.peer, i})
			} else {
				e.ord, last[j][1] = last[j][1], i
			}
		}
	}
	r.pending, r.waited = make([]pendingRecv, len(r.recvs)), make([]bool, len(r.recvs))
	perChunk := (len(r.recvs) + k - 1) / k
	r.ahead = max(1, perChunk*max(r.d, ringDepth(o.c.cfg, k)))
	return r
}

// addEvents lists this rank's events of tree t.
func (r *treeRun) addEvents(t int) {
	s, x := &r.trees[t], r.x
	base := 0 // the step at which the root sends chunk 0 down
	if r.up {
		base = s.height[s.root]
	}
	add := func(key, kind, c, peer, child int, up bool) {
		r.events = append(r.events, treeEvent{key: key, kind: kind, t: t, c: c, peer: peer, child: child, up: up})
	}
	for c := range r.g.k {
		if r.up {
			for i, ch := range s.children[x] {
				add(c+s.height[ch], evRecv, c, ch, i, true)
			}
			if len(s.children[x]) > 0 || s.parent[x] < 0 {
				add(c+s.height[x], evCombine, c, -1, -1, true)
			}
			if p := s.parent[x]; p >= 0 {
				add(c+s.height[x], evSend, c, p, -1, true)
			}
		}
		if r.down {
			if p := s.parent[x]; p >= 0 {
				add(c+base+s.depth[x]-1, evRecv, c, p, -1, false)
			}
			for _, ch := range s.children[x] {
				add(c+base+s.depth[x], evSend, c, ch, -1, false)
			}
		}
	}
}

func (r *treeRun) span(t, c int) (lo, hi int) { return r.g.span(t, c) }

func (r *treeRun) slot(t, i, c int) []byte {
	lo, hi := r.span(t, c)
	return r.slots[t][i][c%r.d][:hi-lo]
}

func (r *treeRun) run() error {
	var bufs [][]byte
	if r.up {
		kids := 0
		for _, s := range r.trees {
			kids += len(s.children[r.x])
		}
		// A child's chunk c lands in slot c%r.d; a part of k < r.d chunks
		// uses only its first k slots (c < k), so no more are lent.
		depth := min(r.d, r.g.k)
		bufs = r.o.c.scratch.get(depth * kids)
		defer r.o.c.scratch.put(bufs)
		rest := bufs
		for t := range r.trees {
			for range r.trees[t].children[r.x] {
				r.slots[t] = append(r.slots[t], rest[:depth])
				rest = rest[depth:]
			}
		}
	}
	if err := r.post(r.ahead, false); err != nil {
		return err
	}
	for r.left > 0 {
		ran := false
		for s := range r.streams {
			for r.next[s] < len(r.streams[s]) {
				ok, err := r.step(r.streams[s][r.next[s]])
				if err != nil {
					return err
				}
				if !ok {
					break
				}
				r.next[s]++
				ran = true
			}
		}
		if !ran && r.left > 0 {
			if err := r.block(); err != nil {
				return err
			}
		}
	}
	return nil
}

// step runs event i if it can run now, and reports whether it did: a
// receive once it has arrived, a send once every earlier send to its peer
// is posted.
func (r *treeRun) step(i int) (bool, error) {
	e := &r.events[i]
	switch e.kind {
	case evCombine:
		if err := r.combine(e.t, e.c); err != nil {
			return false, r.o.fail(err)
		}
	case evSend:
		if e.ord >= 0 && !r.events[e.ord].done {
			return false, nil
		}
		if !e.up && r.up && r.trees[e.t].parent[r.x] < 0 && r.combined[e.t] <= e.c {
			return false, nil // the root sends down what it has combined
		}
		r.sendEvent(e)
	case evRecv:
		if e.ord >= r.posted {
			return false, nil
		}
		if ok, err := r.arrived(e.ord); !ok || err != nil {
			return false, err
		}
		if err := r.o.waitRecv(r.pending[e.ord]); err != nil {
			return false, err
		}
		r.waited[e.ord] = true
		for r.low < len(r.waited) && r.waited[r.low] {
			r.low++
		}
		if err := r.post(r.low+r.ahead, false); err != nil {
			return false, err
		}
	}
	e.done = true
	r.left--
	return true, nil
}

// arrived reports whether receive ord's message is there. A small first
// message is settled once its sender's header is: copied from it when the
// header carried it (waitRecv takes it), else received on its own.
func (r *treeRun) arrived(ord int) (bool, error) {
	pr := &r.pending[ord]
	if pr.first {
		p := &r.o.peers[pr.peer]
		if !transport.Completed(p.hdrReq) {
			return false, nil
		}
		if err := r.o.checkHeader(pr.peer); err != nil || p.carried {
			return err == nil, err
		}
		if _, err := r.o.takeFirst(pr.peer); err != nil {
			return false, err
		}
		pr.first, pr.req = false, p.firstReq
	}
	return transport.Completed(pr.req), nil
}

// awaited is what receive ord waits for: its message, or while a small
// first message is not settled, its sender's header.
func (r *treeRun) awaited(ord int) transport.Request {
	if pr := &r.pending[ord]; pr.first {
		return r.o.peers[pr.peer].hdrReq
	}
	return r.pending[ord].req
}

// block waits until one of the trees' next receives has arrived. The
// first event not yet run in canonical order is a receive (a combine or a
// send there could run); it is posted first, waiting for its buffer if
// need be.
func (r *treeRun) block() error {
	first := -1
	for s := range r.streams {
		if r.next[s] < len(r.streams[s]) {
			if i := r.streams[s][r.next[s]]; first < 0 || i < first {
				first = i
			}
		}
	}
	if e := &r.events[first]; e.kind != evRecv {
		return r.o.fail(fmt.Errorf("internal error: tree %d stuck at a send or combine of chunk %d, step %d", e.t, e.c, e.key))
	}
	if err := r.post(r.low+r.ahead, false); err != nil { // memory freed since
		return err
	}
	if err := r.post(r.events[first].ord+1, true); err != nil {
		return err
	}
	r.cands = r.cands[:0]
	for s := range r.streams {
		if r.next[s] == len(r.streams[s]) {
			continue
		}
		e := &r.events[r.streams[s][r.next[s]]]
		if e.kind != evRecv || e.ord >= r.posted {
			continue
		}
		r.cands = append(r.cands, r.awaited(e.ord))
	}
	if len(r.cands) == 1 { // the first event's: a wait that names its peer
		peer := r.events[first].peer
		if _, err := r.o.await(r.cands[0], peer); err != nil {
			return r.o.fail(r.o.peerErr(peer, err))
		}
		return nil
	}
	if _, err := r.o.awaitAny(r.cands); err != nil {
		return r.o.fail(err)
	}
	return nil
}

// combine reduces chunk c of tree t: this rank's own part and its
// children's, into the first child's slot (which then goes up), or at the
// root into recv.
func (r *treeRun) combine(t, c int) error {
	lo, hi := r.span(t, c)
	own, kids := r.send[lo:hi], r.trees[t].children[r.x]
	var dst []byte
	if r.trees[t].parent[r.x] >= 0 {
		dst = r.slot(t, 0, c)
	} else {
		dst = r.recv[lo:hi]
	}
	if len(kids) == 0 {
		copy(dst, own)
	} else {
		r.spec.kernel(dst, own, r.slot(t, 0, c))
	}
	for i := 1; i < len(kids); i++ {
		r.spec.kernel(dst, dst, r.slot(t, i, c))
	}
	r.combined[t]++
	if r.avg && r.trees[t].parent[r.x] < 0 {
		return reduce.DivideBy(r.spec.dt, dst, r.o.c.Size())
	}
	return nil
}

func (r *treeRun) sendEvent(e *treeEvent) {
	lo, hi := r.span(e.t, e.c)
	switch {
	case !e.up:
		r.o.send(e.peer, r.recv[lo:hi])
	case len(r.trees[e.t].children[r.x]) == 0:
		r.upSends[e.t][e.c] = r.o.send(e.peer, r.send[lo:hi])
	default:
		r.upSends[e.t][e.c] = r.o.send(e.peer, r.slot(e.t, 0, e.c))
	}
}

// post posts receives in order up to ordinal upTo, stopping at the first
// whose buffer is still in use, unless force: then it waits for that use
// to end (always a send or combine of an earlier step).
func (r *treeRun) post(upTo int, force bool) error {
	for r.posted < min(upTo, len(r.recvs)) {
		e := &r.events[r.recvs[r.posted]]
		buf, ok, err := r.recvBuf(e, force)
		if err != nil || !ok {
			return err
		}
		r.pending[r.posted] = r.o.recv(e.peer, buf)
		r.posted++
	}
	return nil
}

// recvBuf returns where receive e lands once that memory is free.
func (r *treeRun) recvBuf(e *treeEvent, force bool) ([]byte, bool, error) {
	s := &r.trees[e.t]
	if e.up { // into a slot, whose last chunk must be combined and sent on
		if prev := e.c - r.d; prev >= 0 {
			if r.combined[e.t] <= prev {
				return nil, false, r.notReady(force, "slot", e)
			}
			if e.child == 0 && s.parent[r.x] >= 0 {
				if ok, err := r.sendDone(e.t, prev, force); !ok || err != nil {
					return nil, false, err
				}
			}
		}
		return r.slot(e.t, e.child, e.c), true, nil
	}
	if r.inPlace && r.up { // recv is send: its chunk must have been read
		if len(s.children[r.x]) > 0 && r.combined[e.t] <= e.c {
			return nil, false, r.notReady(force, "chunk", e)
		}
		if len(s.children[r.x]) == 0 {
			if ok, err := r.sendDone(e.t, e.c, force); !ok || err != nil {
				return nil, false, err
			}
		}
	}
	lo, hi := r.span(e.t, e.c)
	return r.recv[lo:hi], true, nil
}

// notReady is nil (wait) or, forced, an error: the schedule guarantees the
// buffer is free by the time its receive is due.
func (r *treeRun) notReady(force bool, what string, e *treeEvent) error {
	if !force {
		return nil
	}
	return r.o.fail(fmt.Errorf("internal error: tree %d %s of chunk %d still in use at step %d", e.t, what, e.c, e.key))
}

// sendDone reports whether the upward send of chunk c of tree t is done,
// waiting for it if force.
func (r *treeRun) sendDone(t, c int, force bool) (bool, error) {
	req := r.upSends[t][c]
	if req == nil {
		return false, r.notReady(force, "send", &treeEvent{t: t, c: c})
	}
	if force {
		return true, r.o.wait(req, r.trees[t].parent[r.x])
	}
	return transport.Completed(req), nil
}
