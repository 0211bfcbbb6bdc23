package collective

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/tune"
)

// No rank returns success from a rooted operation (Broadcast, Reduce,
// Gather, Scatter) that another rank failed: its completion must depend on
// every other rank's checks. The small forms the communicator picks by
// itself get that from their own data rounds: a Broadcast, Scatter or
// Gather is a dissemination (broadcastDissemination; dissemination.go), a
// Reduce a recursive doubling (reduceRecursiveDoubling), so every rank has
// heard, through a chain of checked messages, from every other before it
// returns. The other forms, in which some ranks finish without hearing
// from every other (a tree's root and leaves, a chain's ends, a larger
// Gather's or Scatter's non-roots), end with a dissemination round among
// all ranks (confirm): ceil(log2 n) more small messages per rank, a small
// cost beside the data they move. The one exception is an eager call in
// steady state (eager.go): the root, and a dissemination's or direct
// Broadcast's receiver once its own data has come, returns before its
// confirmation and reports a mismatch at its next call.

// broadcast validates and launches a Broadcast of root's send into every
// rank's recv (root's too, unless in place).
func (c *Comm) broadcast(ctx context.Context, send, recv []byte, dt dtype.DataType, root int, sync bool) *Handle {
	count := len(recv) / esize(dt)
	algo := c.cfg.Broadcast
	if algo == AlgoAuto {
		// The binomial tree the model may pick for a small message runs as
		// a dissemination: as many rounds, and no confirming round after.
		if algo = c.modelAlgorithm(KindBroadcast, len(recv), root); algo == AlgoBinomial {
			algo = AlgoDissemination
		}
	}
	if algo == AlgoBoard && !c.onBoard(tune.BoardBroadcast, len(recv), true) {
		algo = AlgoAuto // no board, or too large for it
	}
	if algo == AlgoAuto && c.onBoard(tune.BoardBroadcast, len(recv), false) {
		algo = AlgoBoard
	}
	if algo == AlgoAuto {
		algo = localAlgos[tune.LocalBroadcast(len(recv), c.cfg.SmallBytes, c.shared)]
	}
	h := header{kind: KindBroadcast, dt: dt, root: int32(root), count: uint64(count), algo: algo, chunk: uint32(c.cfg.ChunkBytes)}
	if sync && algo == AlgoBoard && c.broadcastLean(ctx, h, send, recv, root) {
		return okHandle // steady, nothing to wait for: no operation (boardlean.go)
	}
	return c.launchArgs(ctx, h, sync, opArgs{send: send, recv: recv, root: root}, func(o *operation) error {
		c, send, recv, dt, root, algo := o.c, o.args.send, o.args.recv, o.hdr.dt, o.args.root, o.hdr.algo
		if err := firstErr(checkType(dt), checkRoot(root, c.Size()), checkWhole("recv", recv, dt)); err != nil {
			return err
		}
		// buf is what this rank sends from. An out-of-place root sends
		// from send and fills recv after its sends are posted, so its own
		// copy overlaps the receivers' instead of delaying them; the
		// algorithms that take buf never write the root's.
		buf, late := recv, false
		if c.rank == root && !sameRegion(send, recv) {
			if err := firstErr(checkLen("send", send, len(recv), dt), checkAlias("send", send, "recv", recv)); err != nil {
				return err
			}
			switch {
			case c.Size() > 1 && (algo == AlgoDissemination || algo == AlgoChain || algo == AlgoBinomial || algo == AlgoDirect):
				buf, late = send, true
			default:
				copy(recv, send)
			}
		}
		if c.Size() == 1 {
			return nil
		}
		if eagerBroadcast(algo, c.rank == root) && o.eagerReturn(len(recv)) {
			// Steady state (eager.go): the root returns once buf is
			// reusable, a receiver once its data has come.
			if c.rank == root {
				buf = o.eagerCopy(buf)
			}
		}
		var err error
		switch algo {
		case AlgoBoard:
			on, err := o.boardEnter()
			if err != nil {
				return err
			}
			if on {
				return c.broadcastBoard(o, buf, root)
			}
			return c.broadcastDissemination(o, buf, root) // no confirm, as below
		case AlgoDissemination:
			err = c.broadcastDissemination(o, buf, root)
			if err == nil && late {
				copy(recv, send)
			}
			return err // no confirm: see above
		case AlgoChain:
			err = c.broadcastChain(o, buf, root)
		case AlgoBinomial:
			err = c.broadcastBinomial(o, buf, root)
		case AlgoDirect:
			err = c.broadcastDirect(o, buf, root)
		case AlgoTree:
			err = c.broadcastTree(o, recv, root)
		case AlgoHierarchical:
			err = c.broadcastHierarchical(o, recv, root, dt)
		default:
			err = fmt.Errorf("algorithm %v does not do Broadcast (use chain, binomial, dissemination, direct, tree or hierarchical)", algo)
		}
		if err != nil {
			return err
		}
		if late {
			copy(recv, send)
		}
		return o.confirm()
	})
}

// localAlgos are tune's LocalAlgo values as Algorithms.
var localAlgos = [...]Algorithm{tune.LocalDissemination: AlgoDissemination, tune.LocalDirect: AlgoDirect, tune.LocalChain: AlgoChain}

// eagerBroadcast reports whether a rank of a Broadcast by algo may return
// early in steady state (eager.go): the root in every algorithm but the
// tree and hierarchical ones; a receiver in the dissemination and direct
// ones, where it waits for its own data only (and, a dissemination's
// forwarder, for its data send when that did not travel with its header).
func eagerBroadcast(algo Algorithm, root bool) bool {
	switch algo {
	case AlgoDissemination, AlgoDirect:
		return true
	case AlgoChain, AlgoBinomial:
		return root
	}
	return false
}

// broadcastDirect has the root send buf to every rank at once and every
// rank receive it in place: for shared memory, where each rank then copies
// straight out of the root's buffer, all at the same time, instead of
// waiting for the chunk to come down a chain. On shared memory buf goes as
// one message: nothing forwards it, so chunks would only add a rendezvous
// (a slot, a system call and a FIN) per chunk and receiver; elsewhere
// (forced) it goes in chunks of Config.ChunkBytes.
func (c *Comm) broadcastDirect(o *operation, buf []byte, root int) error {
	chunk := c.cfg.ChunkBytes
	if c.shared {
		chunk = max(chunk, len(buf))
	}
	var off [2]int
	g := geometryIn(off[:], len(buf), 1, 1, chunk) // no allocation
	if c.rank != root {
		var inline [4]pendingRecv
		pending := inline[:]
		if g.k > len(inline) {
			pending = make([]pendingRecv, g.k)
		}
		pending = pending[:g.k]
		for i := range g.k {
			lo, hi := g.span(0, i)
			pending[i] = o.recv(root, buf[lo:hi])
		}
		for _, pr := range pending {
			if err := o.waitRecv(pr); err != nil {
				return err
			}
		}
		return nil
	}
	n := c.Size()
	for d := 1; d < n; d++ { // each rank's chunks together, so the first starts at once
		p := (root + d) % n
		for i := range g.k {
			lo, hi := g.span(0, i)
			o.send(p, buf[lo:hi])
		}
	}
	return nil
}

// broadcastChain pipelines buf down the chain root, root+1, ...: each rank
// forwards a chunk as soon as it has it, keeping as many receives posted
// as a ring (the root sends every chunk at once).
func (c *Comm) broadcastChain(o *operation, buf []byte, root int) error {
	n := c.Size()
	pos := mod(c.rank-root, n)
	prev, next := mod(c.rank-1, n), mod(c.rank+1, n)
	last := pos == n-1
	g := newGeometry(len(buf), 1, 1, c.cfg.ChunkBytes)
	if pos == 0 {
		for i := 0; i < g.k; i++ {
			lo, hi := g.span(0, i)
			o.send(next, buf[lo:hi])
		}
		return nil
	}
	depth := ringDepth(c.cfg, g.k) // receives land in buf: post a lot ahead
	pending := make([]pendingRecv, depth)
	posted := 0
	for i := 0; i < g.k; i++ {
		for ; posted < g.k && posted < i+depth; posted++ {
			lo, hi := g.span(0, posted)
			pending[posted%depth] = o.recv(prev, buf[lo:hi])
		}
		if err := o.waitRecv(pending[i%depth]); err != nil {
			return err
		}
		if !last {
			lo, hi := g.span(0, i)
			o.send(next, buf[lo:hi])
		}
	}
	return nil
}

// binomialParent returns the parent of relative rank v in a binomial tree
// rooted at 0 (v with its lowest set bit cleared), and that bit.
func binomialParent(v int) (parent, bit int) {
	bit = v & -v
	return v - bit, bit
}

// broadcastBinomial sends buf down a binomial tree: log2(n) rounds.
func (c *Comm) broadcastBinomial(o *operation, buf []byte, root int) error {
	n := c.Size()
	v := mod(c.rank-root, n)
	top := 1
	for top < n {
		top <<= 1
	}
	if v != 0 {
		parent, bit := binomialParent(v)
		if err := o.waitRecv(o.recv(mod(parent+root, n), buf)); err != nil {
			return err
		}
		top = bit
	}
	for bit := top >> 1; bit > 0; bit >>= 1 {
		if child := v + bit; child < n {
			o.send(mod(child+root, n), buf)
		}
	}
	return nil
}

// confirm is a dissemination round: a rank leaves it only once every rank
// has entered it, so no rank reports success while another has failed. An
// eager root (eager.go) posts its part and leaves; it waits when settled.
func (o *operation) confirm() error {
	n, r := o.c.Size(), o.c.rank
	for dist := 1; dist < n; dist <<= 1 {
		pr := o.recv(mod(r-dist, n), nil)
		o.send(mod(r+dist, n), nil)
		if o.eager { // an eager root: settled later (eager.go)
			continue
		}
		if err := o.waitRecv(pr); err != nil {
			return err
		}
	}
	return nil
}

// barrier launches a dissemination Barrier.
func (c *Comm) barrier(ctx context.Context, sync bool) *Handle {
	h := header{kind: KindBarrier, root: -1, algo: AlgoDissemination}
	if c.onBoard(tune.BoardBarrier, 0, false) {
		h.algo = AlgoBoard
	}
	return c.launch(ctx, h, nil, sync, func(o *operation) error {
		if o.hdr.algo == AlgoBoard {
			on, err := o.boardEnter()
			if err != nil {
				return err
			}
			if !on {
				return o.confirm()
			}
			return o.c.barrierBoard(o)
		}
		return o.confirm()
	})
}
