package collective

import (
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// allReduceDirect is a reduce-scatter and an all-gather in which every rank
// exchanges with every other directly, for shared memory (see
// transport.Traits), where a message costs its receiver one copy out of the
// sender's memory and posting to every peer at once costs nothing:
//
//   - Rank r owns segment r. It sends segment p of send to each rank p, in
//     chunks, all posted at once, and receives its own segment's chunks
//     from every rank into chunk-sized scratch, a few chunks ahead.
//   - Chunk by chunk it reduces the n contributions into recv, then sends
//     the finished chunk to every rank, and receives theirs into recv.
//
// Against the ring, each contribution is read once and the result written
// once per chunk while the chunk is in cache, instead of one read-modify-
// write pass of recv per ring step; and a chunk is final after one step
// instead of n-1.
func (c *Comm) allReduceDirect(o *operation, send, recv []byte, count int, spec reduceSpec) error {
	d := &directReduce{o: o, n: c.Size(), r: c.rank, send: send, recv: recv, spec: spec,
		g: newGeometry(count, c.Size(), spec.dt.Size(), c.cfg.ChunkBytes)}
	d.depth = max(1, min(d.g.k, c.cfg.PipelineDepth))
	d.bufs = c.scratch.get(d.depth * d.n)
	defer c.scratch.put(d.bufs)
	return d.run()
}

// directReduce is one rank's state of allReduceDirect.
type directReduce struct {
	o          *operation
	n, r       int
	send, recv []byte
	spec       reduceSpec
	g          geometry
	depth      int      // reduce-scatter chunks received ahead, per peer
	bufs       [][]byte // depth scratch chunks per peer: peer p's are bufs[p*depth:]
	first      []uint32 // per peer, the sequence number of its first chunk
	rsSends    [][]transport.Request
	rsRecvs    [][]pendingRecv // [peer][chunk]
}

func (d *directReduce) run() error {
	k := d.g.k
	d.first = make([]uint32, d.n)
	d.rsSends = make([][]transport.Request, d.n)
	d.rsRecvs = make([][]pendingRecv, d.n)
	for p := range d.peers() {
		d.rsSends[p] = make([]transport.Request, k)
		for ch := range k {
			lo, hi := d.g.span(p, ch)
			d.rsSends[p][ch] = d.o.send(p, d.send[lo:hi])
		}
	}
	// Per peer, its reduce-scatter chunks are messages first..first+k-1 and
	// its all-gather chunks the k after: the first is posted as usual (it
	// may come with the peer's header), the others at their numbers.
	for p := range d.peers() {
		d.rsRecvs[p] = make([]pendingRecv, k)
		d.rsRecvs[p][0] = d.o.recv(p, d.scratch(p, 0))
		d.first[p] = d.rsRecvs[p][0].seq
		d.o.touch(p).recvSeq += uint32(2*k - 1)
		for ch := 1; ch < d.depth; ch++ {
			d.postScatter(p, ch)
		}
	}
	inPlace := sameRegion(d.send, d.recv)
	var gathers []pendingRecv
	if !inPlace {
		gathers = d.postGathers()
	}
	for ch := range k {
		if err := d.reduceChunk(ch); err != nil {
			return err
		}
	}
	if inPlace { // recv is also send: take each region back from its send first
		var err error
		if gathers, err = d.postGathersAfterSends(); err != nil {
			return err
		}
	}
	for _, pr := range gathers {
		if err := d.o.waitRecv(pr); err != nil {
			return err
		}
	}
	return nil
}

// peers yields every rank but this one, starting after it, so that ranks
// do not all address rank 0 first.
func (d *directReduce) peers() func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := 1; i < d.n; i++ {
			if !yield((d.r + i) % d.n) {
				return
			}
		}
	}
}

// scratch is the buffer of peer p's chunk ch of this rank's segment.
func (d *directReduce) scratch(p, ch int) []byte {
	lo, hi := d.g.span(d.r, ch)
	return d.bufs[p*d.depth+ch%d.depth][:hi-lo]
}

func (d *directReduce) postScatter(p, ch int) {
	seq := d.first[p] + uint32(ch)
	buf := d.scratch(p, ch)
	d.rsRecvs[p][ch] = pendingRecv{peer: p, buf: buf, seq: seq, req: d.o.postRecv(p, seq, buf)}
}

// postGathers posts the receive of every peer's finished chunks into recv.
func (d *directReduce) postGathers() []pendingRecv {
	var out []pendingRecv
	for p := range d.peers() {
		for ch := range d.g.k {
			out = append(out, d.postGather(p, ch))
		}
	}
	return out
}

func (d *directReduce) postGather(p, ch int) pendingRecv {
	lo, hi := d.g.span(p, ch)
	seq := d.first[p] + uint32(d.g.k+ch)
	return pendingRecv{peer: p, buf: d.recv[lo:hi], seq: seq, req: d.o.postRecv(p, seq, d.recv[lo:hi])}
}

// postGathersAfterSends is postGathers for an in-place call: a region of
// recv is received into only once the send of that region to that peer is
// done.
func (d *directReduce) postGathersAfterSends() ([]pendingRecv, error) {
	var out []pendingRecv
	for p := range d.peers() {
		for ch := range d.g.k {
			if err := d.o.wait(d.rsSends[p][ch], p); err != nil {
				return nil, err
			}
			out = append(out, d.postGather(p, ch))
		}
	}
	return out, nil
}

// reduceChunk combines chunk ch of this rank's segment from every rank
// into recv in rank order, (((x0 op x1) op x2) ...), whatever this rank
// is: every rank receives the same bits, computed once by the segment's
// owner, and the same for every chunk size (Config.Deterministic relies on
// it). Then it sends the result to every peer.
func (d *directReduce) reduceChunk(ch int) error {
	lo, hi := d.g.span(d.r, ch)
	acc, own := d.recv[lo:hi], d.send[lo:hi] // the same memory in place
	// In place, own is acc: the partial folds of ranks below this one go
	// to the scratch slot of this rank, which no peer uses, and the fold
	// of own reads acc and writes it back, so own is never copied aside.
	dst := acc
	if d.r > 1 && sameRegion(acc, own) {
		dst = d.scratch(d.r, ch)
	}
	part := func(q int) ([]byte, error) {
		if q == d.r {
			return own, nil
		}
		if err := d.o.waitRecv(d.rsRecvs[q][ch]); err != nil {
			return nil, err
		}
		return d.scratch(q, ch), nil
	}
	x0, err := part(0)
	if err != nil {
		return err
	}
	for q := 1; q < d.n; q++ {
		xq, err := part(q)
		if err != nil {
			return err
		}
		if q == d.r {
			dst = acc
		}
		d.spec.kernel(dst, x0, xq)
		x0 = dst
	}
	if d.spec.op == reduce.Avg {
		if err := reduce.DivideBy(d.spec.dt, acc, d.n); err != nil {
			return d.o.fail(err) // releases the scratch receives before the deferred put
		}
	}
	if next := ch + d.depth; next < d.g.k {
		for p := range d.peers() {
			d.postScatter(p, next)
		}
	}
	for p := range d.peers() {
		d.o.send(p, acc)
	}
	return nil
}
