package collective

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// reduceOp validates and launches a Reduce of every rank's send into root's
// recv (recv is ignored elsewhere and may be nil).
func (c *Comm) reduceOp(ctx context.Context, send, recv []byte, dt dtype.DataType, op reduce.Op, root int, sync bool) *Handle {
	count := len(send) / esize(dt)
	algo := c.reduceAlgorithm(len(send), root)
	h := header{kind: KindReduce, dt: dt, op: op, root: int32(root), count: uint64(count), algo: algo, chunk: uint32(c.cfg.ChunkBytes)}
	return c.launchArgs(ctx, h, sync, opArgs{send: send, recv: recv, root: root}, func(o *operation) error {
		c, send, recv, dt, root, algo := o.c, o.args.send, o.args.recv, o.hdr.dt, o.args.root, o.hdr.algo
		spec, err := lookupReduce(dt, o.hdr.op)
		if err != nil {
			return err
		}
		if err := firstErr(checkRoot(root, c.Size()), checkWhole("send", send, dt)); err != nil {
			return err
		}
		if c.rank == root {
			if err := firstErr(checkLen("recv", recv, len(send), dt), checkAlias("send", send, "recv", recv)); err != nil {
				return err
			}
		}
		if c.Size() == 1 {
			copy(recv, send)
			return finishAvg(spec, recv, 1)
		}
		switch algo {
		case AlgoRecursiveDoubling:
			return c.reduceRecursiveDoubling(o, send, recv, root, spec) // no confirm
		case AlgoChain:
			err = c.reduceChain(o, send, recv, root, spec)
		case AlgoBinomial:
			err = c.reduceBinomial(o, send, recv, root, spec)
		case AlgoTree:
			err = c.reduceTree(o, send, recv, root, spec)
		default:
			err = fmt.Errorf("algorithm %v does not do Reduce (use chain, binomial, recursive-doubling or tree)", algo)
		}
		if err != nil {
			return err
		}
		if c.rank == root {
			if err := finishAvg(spec, recv, c.Size()); err != nil {
				return err
			}
		}
		return o.confirm()
	})
}

// reduceAlgorithm is the algorithm a Reduce of bytes to root runs:
// Config.Reduce, or the automatic choice. The binomial tree the cost model
// may pick runs as a recursive doubling, with as many rounds and no
// confirming round after (broadcast.go), while the buffer travels inline
// with the headers, where a message costs its latency, not its bytes;
// above, as the binomial tree the model priced (a recursive doubling
// sends n*log2(n) messages of the buffer, the binomial n-1). Without a
// model: recursive doubling at or below Config.SmallBytes, else a chain.
func (c *Comm) reduceAlgorithm(bytes, root int) Algorithm {
	algo := c.cfg.Reduce
	if algo == AlgoAuto {
		if algo = c.modelAlgorithm(KindReduce, bytes, root); algo == AlgoBinomial && bytes <= inlineBytesMax {
			algo = AlgoRecursiveDoubling
		}
	}
	if algo == AlgoAuto {
		algo = AlgoChain
		if bytes <= c.cfg.SmallBytes {
			algo = AlgoRecursiveDoubling
		}
	}
	return algo
}

// reduceChain pipelines partial reductions up the chain root+n-1, ..., root+1,
// root. A rank at position p forms x_p op (partial from p+1) in the chunk it
// received and forwards it; chunk buffers are reused only once forwarded.
func (c *Comm) reduceChain(o *operation, send, recv []byte, root int, spec reduceSpec) error {
	n := c.Size()
	pos := mod(c.rank-root, n)
	from, to := mod(c.rank+1, n), mod(c.rank-1, n)
	g := newGeometry(len(send)/spec.dt.Size(), 1, spec.dt.Size(), c.cfg.ChunkBytes)
	if pos == n-1 { // the far end only sends
		for i := 0; i < g.k; i++ {
			lo, hi := g.span(0, i)
			o.send(to, send[lo:hi])
		}
		return nil
	}
	depth := c.cfg.PipelineDepth
	tmp := c.scratch.get(2 * depth)
	defer c.scratch.put(tmp)
	pending := make([]pendingRecv, depth)
	sends := make([]pendingSend, len(tmp))
	posted := 0
	for i := 0; i < g.k; i++ {
		for ; posted < g.k && posted < i+depth; posted++ {
			lo, hi := g.span(0, posted)
			slot := posted % len(tmp)
			if err := sends[slot].wait(o); err != nil { // the slot's last forward
				return err
			}
			pending[posted%depth] = o.recv(from, tmp[slot][:hi-lo])
		}
		if err := o.waitRecv(pending[i%depth]); err != nil {
			return err
		}
		lo, hi := g.span(0, i)
		t := tmp[i%len(tmp)][:hi-lo]
		if pos == 0 {
			spec.kernel(recv[lo:hi], send[lo:hi], t)
			continue
		}
		spec.kernel(t, send[lo:hi], t)
		sends[i%len(tmp)] = pendingSend{o.send(to, t), to}
	}
	return nil
}

// reduceRecursiveDoubling is a Reduce run as AllReduce's recursive
// doubling, the result kept at the root (recv; a scratch buffer elsewhere):
// every rank then hears, through checked messages, from every other before
// it returns, so the operation needs no confirming round (broadcast.go).
// Its combining order is the recursive doubling's, fixed by n alone.
func (c *Comm) reduceRecursiveDoubling(o *operation, send, recv []byte, root int, spec reduceSpec) error {
	if c.rank == root {
		return c.allReduceRecursiveDoubling(o, send, recv, spec)
	}
	lent := c.tempBuffer(len(send))
	defer lent.release()
	return c.allReduceRecursiveDoubling(o, send, lent.buf, spec)
}

// pendingSend is a posted send that a buffer's reuse must wait for.
type pendingSend struct {
	req  transport.Request
	peer int
}

func (p *pendingSend) wait(o *operation) error {
	if p.req == nil {
		return nil
	}
	err := o.wait(p.req, p.peer)
	p.req = nil
	return err
}

// reduceBinomial reduces whole buffers up a binomial tree in log2(n) rounds.
// A rank combines its own value with each child's subtree result, smallest
// subtree first, so the order is fixed by n and root alone.
func (c *Comm) reduceBinomial(o *operation, send, recv []byte, root int, spec reduceSpec) error {
	n := c.Size()
	v := mod(c.rank-root, n)
	accLease, tmpLease := c.tempBuffer(len(send)), c.tempBuffer(len(send))
	defer accLease.release()
	defer tmpLease.release()
	acc, tmp := accLease.buf, tmpLease.buf
	copy(acc, send)
	for bit := 1; bit < n; bit <<= 1 {
		if v&bit != 0 {
			return o.wait(o.send(mod(v-bit+root, n), acc), mod(v-bit+root, n))
		}
		if child := v + bit; child < n {
			if err := o.waitRecv(o.recv(mod(child+root, n), tmp)); err != nil {
				return err
			}
			spec.kernel(acc, acc, tmp)
		}
	}
	copy(recv, acc)
	return nil
}

// gather validates and launches a Gather: root's recv gets every rank's
// send, rank r's at block r. In place at root: send is recv's block root.
// While all of it fits in one header's message (inlineBytesMax), a
// dissemination (dissemination.go); above, every rank sends its block to
// the root, and a confirming round follows.
func (c *Comm) gather(ctx context.Context, send, recv []byte, dt dtype.DataType, root int, sync bool) *Handle {
	n := c.Size()
	count := len(send) / esize(dt)
	algo := AlgoDirect
	if n*len(send) <= inlineBytesMax {
		algo = AlgoDissemination
	}
	h := header{kind: KindGather, dt: dt, root: int32(root), count: uint64(count), algo: algo}
	return c.launch(ctx, h, nil, sync, func(o *operation) error {
		if err := firstErr(checkType(dt), checkRoot(root, n), checkWhole("send", send, dt)); err != nil {
			return err
		}
		if c.rank != root && algo == AlgoDissemination {
			return c.gatherDissemination(o, send, nil, root) // no confirm (dissemination.go)
		}
		if c.rank != root {
			buf := send
			if o.eagerReturn(len(send)) { // steady state: return once send is reusable (eager.go)
				buf = o.eagerCopy(send)
			}
			r := o.send(root, buf)
			if o.eager {
				return o.confirm()
			}
			if err := o.wait(r, root); err != nil {
				return err
			}
			return o.confirm()
		}
		if err := checkLen("recv", recv, n*len(send), dt); err != nil {
			return err
		}
		if mine := recv[root*len(send) : (root+1)*len(send)]; !sameRegion(send, mine) {
			if err := checkAlias("send", send, "recv", recv); err != nil {
				return err
			}
			copy(mine, send)
		}
		if algo == AlgoDissemination {
			return c.gatherDissemination(o, send, recv, root)
		}
		prs := make([]pendingRecv, 0, n-1)
		for p := 0; p < n; p++ {
			if p != root {
				prs = append(prs, o.recv(p, recv[p*len(send):(p+1)*len(send)]))
			}
		}
		for _, pr := range prs {
			if err := o.waitRecv(pr); err != nil {
				return err
			}
		}
		return o.confirm()
	})
}

// scatter validates and launches a Scatter: rank r's recv gets block r of
// root's send. In place at root: recv is send's block root. At most
// Config.SmallBytes in all, a dissemination (dissemination.go); above, the root
// sends each rank its block, and a confirming round follows.
func (c *Comm) scatter(ctx context.Context, send, recv []byte, dt dtype.DataType, root int, sync bool) *Handle {
	n := c.Size()
	count := len(recv) / esize(dt)
	algo := AlgoDirect
	if n*len(recv) <= c.cfg.SmallBytes {
		algo = AlgoDissemination
	}
	h := header{kind: KindScatter, dt: dt, root: int32(root), count: uint64(count), algo: algo}
	return c.launch(ctx, h, nil, sync, func(o *operation) error {
		if err := firstErr(checkType(dt), checkRoot(root, n), checkWhole("recv", recv, dt)); err != nil {
			return err
		}
		if c.rank != root && algo == AlgoDissemination {
			return c.scatterDissemination(o, nil, recv, root) // no confirm (scatter.go)
		}
		if c.rank != root {
			if err := o.waitRecv(o.recv(root, recv)); err != nil {
				return err
			}
			return o.confirm()
		}
		if err := checkLen("send", send, n*len(recv), dt); err != nil {
			return err
		}
		if mine := send[root*len(recv) : (root+1)*len(recv)]; !sameRegion(mine, recv) {
			if err := checkAlias("send", send, "recv", recv); err != nil {
				return err
			}
			copy(recv, mine)
		}
		if algo == AlgoDissemination {
			return c.scatterDissemination(o, send, recv, root)
		}
		for p := 0; p < n; p++ {
			if p != root {
				o.send(p, send[p*len(recv):(p+1)*len(recv)])
			}
		}
		return o.confirm()
	})
}
