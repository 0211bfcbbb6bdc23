package collective

import (
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// ringSchedule says what a pipelined ring moves at each index i = step*k +
// chunk: which bytes to send to the right neighbour, where to receive the
// left neighbour's, and what to do once they have arrived.
type ringSchedule interface {
	// sendBuf is the message of index i. For i >= k it is called only after
	// afterRecv(i-k), since step s forwards what step s-1 produced.
	sendBuf(i int) []byte
	// recvBuf is where the message of index i lands. It may first wait for
	// an earlier send that still reads that memory.
	recvBuf(i int) ([]byte, error)
	// afterRecv runs when the message of index i has arrived.
	afterRecv(i int) error
}

// ring drives a ring of n ranks through steps*k indices, keeping depth
// receives posted ahead, so that sending, receiving and reducing overlap.
type ring struct {
	o           *operation
	left, right int
	steps, k    int
	depth       int
	sends       []transport.Request // by index
	sched       ringSchedule
	pending     []pendingRecv // by index % depth
	posted      int           // receives posted so far
}

// newRing returns the ring of o over steps*k indices. The operation's first
// ring, when small, lives in the operation (no allocation).
func newRing(o *operation, steps, k int) *ring {
	n, r := o.c.Size(), o.c.rank
	var g *ring
	if !o.ringUsed && steps*k <= len(o.ringSendsIn) {
		o.ringUsed, g = true, &o.ringInline
	} else {
		g = new(ring)
	}
	*g = ring{o: o, left: mod(r-1, n), right: mod(r+1, n), steps: steps, k: k, depth: ringDepth(o.c.cfg, k)}
	if g == &o.ringInline {
		g.sends = o.ringSendsIn[:steps*k]
	} else {
		g.sends = make([]transport.Request, steps*k)
	}
	return g
}

// ringLookaheadBytes bounds the bytes of receives a ring keeps posted.
const ringLookaheadBytes = 32 << 20

// ringDepth is how many receives a ring of k chunks per step keeps posted:
// a whole step's (within ringLookaheadBytes), and at least
// Config.PipelineDepth. A rank sends all k chunks of its first step at
// once, so with fewer posted the neighbour's transport would have to hold
// the early chunks as unexpected messages (a copy, and on MetaRoCE a wait
// for credit) instead of receiving them in place.
func ringDepth(cfg Config, k int) int {
	return max(cfg.PipelineDepth, min(k, max(1, ringLookaheadBytes/cfg.ChunkBytes)))
}

// waitSend waits until the send of index i (if any was posted) is done.
func (g *ring) waitSend(i int) error {
	if i < 0 || i >= len(g.sends) || g.sends[i] == nil {
		return nil
	}
	return g.o.wait(g.sends[i], g.right)
}

// run posts the first step's receives before this rank's first sends: the
// left neighbour starts at the same time, and a message that arrives before
// its receive is posted is held by the transport and copied once more (on
// MetaRoCE, a copy per piece and a wait for credit beyond its budget).
func (g *ring) run(s ringSchedule) error {
	if err := g.start(s); err != nil {
		return err
	}
	for i := 0; i < g.steps*g.k; i++ {
		if err := g.step(i); err != nil {
			return err
		}
	}
	return nil
}

// start posts the first receives and sends of schedule s; step(i), for i
// from 0 to steps*k-1 in order, then waits for index i and sends on. Rings
// of channels (allReduceChannels) interleave their steps.
func (g *ring) start(s ringSchedule) error {
	g.sched, g.posted = s, 0
	if g == &g.o.ringInline && g.depth <= len(g.o.ringPendingIn) {
		g.pending = g.o.ringPendingIn[:g.depth]
	} else {
		g.pending = make([]pendingRecv, g.depth)
	}
	if err := g.post(min(g.k, g.depth)); err != nil {
		return err
	}
	for i := 0; i < min(g.k, g.steps*g.k); i++ {
		g.sends[i] = g.o.send(g.right, s.sendBuf(i))
	}
	return nil
}

// post posts the receives of the indices below upTo not yet posted.
func (g *ring) post(upTo int) error {
	for ; g.posted < min(g.steps*g.k, upTo); g.posted++ {
		buf, err := g.sched.recvBuf(g.posted)
		if err != nil {
			return err
		}
		g.pending[g.posted%g.depth] = g.o.recv(g.left, buf)
	}
	return nil
}

func (g *ring) step(i int) error {
	if err := g.post(i + g.depth); err != nil {
		return err
	}
	if err := g.o.waitRecv(g.pending[i%g.depth]); err != nil {
		return err
	}
	if err := g.sched.afterRecv(i); err != nil {
		return err
	}
	if j := i + g.k; j < g.steps*g.k {
		g.sends[j] = g.o.send(g.right, g.sched.sendBuf(j))
	}
	return nil
}

// allReduceRing is a ring reduce-scatter followed by a ring all-gather,
// pipelined as one pass of 2(n-1) steps. Partial sums live in recv, so an
// out-of-place call needs no copy of send. Rank r ends the reduce-scatter
// owning segment r+1, which it finishes (Avg) before passing it on.
type allReduceRing struct {
	g          geometry
	n, r       int
	send, recv []byte
	spec       reduceSpec
	ring       *ring
	tmp        [][]byte // depth chunk buffers for reduce-scatter receives
}

func (a *allReduceRing) segs(i int) (step, c, sendSeg, recvSeg int) {
	step, c = i/a.g.k, i%a.g.k
	if step < a.n-1 {
		return step, c, mod(a.r-step, a.n), mod(a.r-step-1, a.n)
	}
	t := step - (a.n - 1)
	return step, c, mod(a.r+1-t, a.n), mod(a.r-t, a.n)
}

func (a *allReduceRing) sendBuf(i int) []byte {
	step, c, seg, _ := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if step == 0 {
		return a.send[lo:hi]
	}
	return a.recv[lo:hi]
}

func (a *allReduceRing) recvBuf(i int) ([]byte, error) {
	step, c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	if step < a.n-1 {
		return a.tmp[i%len(a.tmp)][:hi-lo], nil
	}
	// The reduce-scatter sent from this region (n-1) steps earlier.
	if err := a.ring.waitSend(i - (a.n-1)*a.g.k); err != nil {
		return nil, err
	}
	return a.recv[lo:hi], nil
}

func (a *allReduceRing) afterRecv(i int) error {
	step, c, _, seg := a.segs(i)
	if step >= a.n-1 {
		return nil
	}
	lo, hi := a.g.span(seg, c)
	a.spec.kernel(a.recv[lo:hi], a.send[lo:hi], a.tmp[i%len(a.tmp)][:hi-lo])
	if step == a.n-2 && a.spec.op == reduce.Avg {
		return reduce.DivideBy(a.spec.dt, a.recv[lo:hi], a.n)
	}
	return nil
}

// allReduceRingDepth bounds the receives an all-reducing ring of n ranks
// and k chunks per step keeps posted ahead. An all-gather receive of index
// i lands where the reduce-scatter send of index i-(n-1)k read, and
// recvBuf first waits for that send. With at most (n-1)k ahead, posted
// while this rank waits for index w, that send's index is below w, posted
// at an earlier iteration. With up to n*k (the flat ring's bound until
// now) it may be the send of index up to w+k-1, just posted: safe in the
// flat ring only because each pair's first message there goes with its
// header, and a hang in allReduceHierarchical, whose rings run after
// phases that carried the headers. One bound for both makes the ring safe
// whatever phase it runs in. It costs nothing: a ring posts
// max(PipelineDepth, min(k, 32 MiB of chunks)) ahead, so it only bites
// when (n-1)k is below PipelineDepth.
func allReduceRingDepth(depth, n, k int) int { return min(depth, max(1, (n-1)*k)) }

func (c *Comm) allReduceRing(o *operation, send, recv []byte, count int, spec reduceSpec) error {
	n := c.Size()
	a := &allReduceRing{g: newGeometry(count, n, spec.dt.Size(), c.cfg.ChunkBytes),
		n: n, r: c.rank, send: send, recv: recv, spec: spec}
	a.ring = newRing(o, 2*(n-1), a.g.k)
	a.ring.depth = allReduceRingDepth(a.ring.depth, n, a.g.k)
	bufs := c.scratch.get(a.ring.depth)
	defer c.scratch.put(bufs)
	a.tmp = bufs
	return a.ring.run(a)
}

// reduceScatterRing reduces n blocks of count elements so that rank r ends
// with block r in recv. A step's partial sums go to acc, one block long,
// from where the next step forwards them; a chunk of acc is overwritten only
// once its previous partial has been sent.
type reduceScatterRing struct {
	g          geometry
	n, r       int
	send, recv []byte
	spec       reduceSpec
	ring       *ring
	tmp        [][]byte // depth chunk buffers for receives
	acc        []byte   // partial sums, one block
}

func (a *reduceScatterRing) segs(i int) (step, c, sendSeg, recvSeg int) {
	step, c = i/a.g.k, i%a.g.k
	return step, c, mod(a.r-step-1, a.n), mod(a.r-step-2, a.n)
}

// accSpan is the range of acc that chunk c of a block occupies.
func (a *reduceScatterRing) accSpan(seg, c int) []byte {
	lo, hi := a.g.span(seg, c)
	base, _ := a.g.seg(seg)
	return a.acc[lo-base : hi-base]
}

func (a *reduceScatterRing) sendBuf(i int) []byte {
	step, c, seg, _ := a.segs(i)
	if step == 0 {
		lo, hi := a.g.span(seg, c)
		return a.send[lo:hi]
	}
	return a.accSpan(seg, c)
}

func (a *reduceScatterRing) recvBuf(i int) ([]byte, error) {
	_, c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	return a.tmp[i%len(a.tmp)][:hi-lo], nil
}

func (a *reduceScatterRing) afterRecv(i int) error {
	step, c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	t := a.tmp[i%len(a.tmp)][:hi-lo]
	if step < a.n-2 {
		// send(i) forwards the previous partial from this chunk of acc.
		if err := a.ring.waitSend(i); err != nil {
			return err
		}
		a.spec.kernel(a.accSpan(seg, c), a.send[lo:hi], t)
		return nil
	}
	base, _ := a.g.seg(a.r)
	dst := a.recv[lo-base : hi-base]
	a.spec.kernel(dst, a.send[lo:hi], t)
	if a.spec.op == reduce.Avg {
		return reduce.DivideBy(a.spec.dt, dst, a.n)
	}
	return nil
}

func (c *Comm) reduceScatterRing(o *operation, send, recv []byte, count int, spec reduceSpec) error {
	n := c.Size()
	a := &reduceScatterRing{g: uniformGeometry(count, n, spec.dt.Size(), c.cfg.ChunkBytes),
		n: n, r: c.rank, send: send, recv: recv, spec: spec}
	a.ring = newRing(o, n-1, a.g.k)
	bufs := c.scratch.get(a.ring.depth)
	defer c.scratch.put(bufs)
	a.tmp = bufs
	acc := c.tempBuffer(len(recv))
	defer acc.release()
	a.acc = acc.buf
	return a.ring.run(a)
}

// allGatherRing passes every block once around the ring, each received
// straight into its place in recv. recv must already hold this rank's block.
type allGatherRing struct {
	g    geometry
	n, r int
	recv []byte
}

func (a *allGatherRing) segs(i int) (c, sendSeg, recvSeg int) {
	step, c := i/a.g.k, i%a.g.k
	return c, mod(a.r-step, a.n), mod(a.r-step-1, a.n)
}

func (a *allGatherRing) sendBuf(i int) []byte {
	c, seg, _ := a.segs(i)
	lo, hi := a.g.span(seg, c)
	return a.recv[lo:hi]
}

func (a *allGatherRing) recvBuf(i int) ([]byte, error) {
	c, _, seg := a.segs(i)
	lo, hi := a.g.span(seg, c)
	return a.recv[lo:hi], nil
}

func (a *allGatherRing) afterRecv(int) error { return nil }

func (c *Comm) allGatherRing(o *operation, recv []byte, count, esize int) error {
	n := c.Size()
	a := &o.agInline // one AllGather ring per operation
	*a = allGatherRing{g: geometryIn(o.offInline[:0], count*n, n, esize, c.cfg.ChunkBytes), n: n, r: c.rank, recv: recv}
	return newRing(o, n-1, a.g.k).run(a)
}
