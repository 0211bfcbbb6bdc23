package collective

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/collective/tune"
)

// allReduce validates and launches an AllReduce of send into recv.
func (c *Comm) allReduce(ctx context.Context, send, recv []byte, dt dtype.DataType, op reduce.Op, sync bool) *Handle {
	count := len(send) / esize(dt)
	algo := c.cfg.AllReduce
	if c.cfg.Deterministic {
		algo = AlgoDirect // its fold is the canonical order, rank order
		if c.onBoard(tune.BoardAllReduce, len(send), false) {
			algo = AlgoBoard // the board folds in rank order too
		}
	}
	if algo == AlgoBoard && !c.onBoard(tune.BoardAllReduce, len(send), true) {
		algo = AlgoAuto // no board, or too large for it
	}
	if algo == AlgoAuto {
		algo = c.modelAlgorithm(KindAllReduce, len(send), -1)
	}
	if algo == AlgoAuto && c.onBoard(tune.BoardAllReduce, len(send), false) {
		algo = AlgoBoard
	}
	if algo == AlgoAuto {
		switch {
		case len(send) <= c.cfg.SmallBytes:
			algo = AlgoRecursiveDoubling
		case c.shared:
			algo = AlgoDirect
		default:
			algo = AlgoRing
		}
	}
	h := header{kind: KindAllReduce, dt: dt, op: op, root: -1, count: uint64(count), algo: algo, chunk: uint32(c.cfg.ChunkBytes),
		determ: c.cfg.Deterministic}
	if algo == AlgoRing && dt.Size() > 0 {
		h.channels = uint8(len(c.ringStrides(count, dt.Size())))
	}
	return c.launchArgs(ctx, h, sync, opArgs{send: send, recv: recv}, func(o *operation) error {
		c, send, recv, dt, algo := o.c, o.args.send, o.args.recv, o.hdr.dt, o.hdr.algo
		count := len(send) / esize(dt)
		spec, err := lookupReduce(dt, o.hdr.op)
		if err != nil {
			return err
		}
		if err := firstErr(checkWhole("send", send, dt), checkLen("recv", recv, len(send), dt),
			checkAlias("send", send, "recv", recv)); err != nil {
			return err
		}
		if c.Size() == 1 {
			copy(recv, send)
			return finishAvg(spec, recv, 1)
		}
		switch algo {
		case AlgoRing:
			return c.allReduceChannels(o, send, recv, count, spec)
		case AlgoRecursiveDoubling:
			return c.allReduceRecursiveDoubling(o, send, recv, spec)
		case AlgoBoard:
			on, err := o.boardEnter()
			if err != nil {
				return err
			}
			if !on && o.hdr.determ { // the set-up call, or no board: rank order still
				return c.allReduceDirect(o, send, recv, count, spec)
			}
			if !on {
				return c.allReduceRecursiveDoubling(o, send, recv, spec)
			}
			if tune.BoardSplit(len(send), c.Size(), c.cfg.BoardSplitBytes) { // alike on every member (boardSetUp)
				return c.allReduceBoardSplit(o, send, recv, spec)
			}
			return c.allReduceBoard(o, send, recv, spec)
		case AlgoDirect:
			return c.allReduceDirect(o, send, recv, count, spec)
		case AlgoTree:
			return c.allReduceTree(o, send, recv, count, spec)
		case AlgoHierarchical:
			return c.allReduceHierarchical(o, send, recv, spec)
		}
		return fmt.Errorf("algorithm %v does not do AllReduce (use ring, recursive-doubling, direct, tree or hierarchical)", algo)
	})
}

// finishAvg divides by n when the operation is Avg.
func finishAvg(spec reduceSpec, buf []byte, n int) error {
	if spec.op != reduce.Avg {
		return nil
	}
	return reduce.DivideBy(spec.dt, buf, n)
}

// allReduceRecursiveDoubling reduces whole buffers in log2(p) rounds of
// pairwise exchange, p the largest power of two not above n; the n-p extra
// ranks first fold their data into a neighbour and get the result back at
// the end. Each exchange combines lower rank op higher rank, so every rank
// computes the very same bits. The first exchange sends and reduces from
// send straight into recv (cur is send until then), so an out-of-place
// call never copies send.
func (c *Comm) allReduceRecursiveDoubling(o *operation, send, recv []byte, spec reduceSpec) error {
	n, r := c.Size(), c.rank
	cur := send
	lent := c.tempBuffer(len(recv))
	defer lent.release()
	tmp := lent.buf
	p := 1
	for p*2 <= n {
		p *= 2
	}
	rem := n - p
	var v int // rank among the p that take part in the doubling, or -1
	switch {
	case r < 2*rem && r%2 == 0: // folds into r+1 and waits for the result
		if err := o.wait(o.send(r+1, send), r+1); err != nil {
			return err
		}
		return o.waitRecv(o.recv(r+1, recv)) // already finished (Avg) by r+1
	case r < 2*rem:
		if err := o.waitRecv(o.recv(r-1, tmp)); err != nil {
			return err
		}
		spec.kernel(recv, tmp, send) // lower rank first
		cur, v = recv, r/2
	default:
		v = r - rem
	}
	real := func(v int) int {
		if v < rem {
			return 2*v + 1
		}
		return v + rem
	}
	for mask := 1; mask < p; mask <<= 1 {
		partner := real(v ^ mask)
		pr := o.recv(partner, tmp)
		sr := o.send(partner, cur)
		if err := o.waitRecv(pr); err != nil {
			return err
		}
		// The reduction below overwrites recv, so a send out of it must
		// have been taken first. A send out of an out-of-place send buffer
		// (the first exchange) is left to finish, which waits for every
		// request: this rank goes on to the next exchange without waiting
		// for the partner to copy its data (over shared memory, a large
		// message is copied by the receiver, once it runs).
		if sameRegion(cur, recv) { // cur is send or recv; send and recv are the same region or disjoint
			if err := o.wait(sr, partner); err != nil {
				return err
			}
		}
		if partner < r {
			spec.kernel(recv, tmp, cur)
		} else {
			spec.kernel(recv, cur, tmp)
		}
		cur = recv
	}
	if err := finishAvg(spec, recv, n); err != nil {
		return err
	}
	if r < 2*rem {
		return o.wait(o.send(r-1, recv), r-1)
	}
	return nil
}

// tempBuffer lends a buffer of n bytes: a scratch chunk when it fits, else
// the communicator's large buffer (kept between operations, so that a
// steady stream of large ReduceScatters does not page-fault a fresh buffer
// each time), or a fresh one while that is lent out. Release the lease
// when done.
func (c *Comm) tempBuffer(n int) lease { return c.scratch.lend(n) }

// reduceScatter validates and launches a ReduceScatter: send holds n blocks
// of len(recv) bytes; rank r receives the reduction of every rank's block r.
func (c *Comm) reduceScatter(ctx context.Context, send, recv []byte, dt dtype.DataType, op reduce.Op, sync bool) *Handle {
	n := c.Size()
	count := len(recv) / esize(dt)
	algo := c.blockAlgorithm(c.cfg.ReduceScatter, len(send))
	h := header{kind: KindReduceScatter, dt: dt, op: op, root: -1, count: uint64(count), algo: algo, chunk: uint32(c.cfg.ChunkBytes)}
	return c.launch(ctx, h, nil, sync, func(o *operation) error {
		spec, err := lookupReduce(dt, op)
		if err != nil {
			return err
		}
		if err := firstErr(checkWhole("recv", recv, dt), checkLen("send", send, n*len(recv), dt)); err != nil {
			return err
		}
		mine := send[c.rank*len(recv) : (c.rank+1)*len(recv)]
		if !sameRegion(mine, recv) { // in place is recv = this rank's block of send
			if err := checkAlias("send", send, "recv", recv); err != nil {
				return err
			}
		}
		if n == 1 {
			copy(recv, mine)
			return finishAvg(spec, recv, 1)
		}
		switch algo {
		case AlgoRing:
			return c.reduceScatterRing(o, send, recv, count, spec)
		case AlgoHierarchical:
			return c.reduceScatterHierarchical(o, send, recv, spec)
		}
		return fmt.Errorf("algorithm %v does not do ReduceScatter (use ring or hierarchical)", algo)
	})
}

// allGather validates and launches an AllGather: recv gets every rank's
// send, rank r's at block r. In place: send is recv's block of this rank.
func (c *Comm) allGather(ctx context.Context, send, recv []byte, dt dtype.DataType, sync bool) *Handle {
	n := c.Size()
	count := len(send) / esize(dt)
	algo := c.blockAlgorithm(c.cfg.AllGather, n*len(send))
	h := header{kind: KindAllGather, dt: dt, root: -1, count: uint64(count), algo: algo, chunk: uint32(c.cfg.ChunkBytes)}
	return c.launchArgs(ctx, h, sync, opArgs{send: send, recv: recv}, func(o *operation) error {
		c, send, recv, dt, algo := o.c, o.args.send, o.args.recv, o.hdr.dt, o.hdr.algo
		n, count := c.Size(), len(send)/esize(dt)
		if err := firstErr(checkType(dt), checkWhole("send", send, dt), checkLen("recv", recv, n*len(send), dt)); err != nil {
			return err
		}
		mine := recv[c.rank*len(send) : (c.rank+1)*len(send)]
		if !sameRegion(send, mine) {
			if err := checkAlias("send", send, "recv", recv); err != nil {
				return err
			}
			copy(mine, send)
		}
		if n == 1 {
			return nil
		}
		switch algo {
		case AlgoRing:
			return c.allGatherRing(o, recv, count, esize(dt))
		case AlgoHierarchical:
			return c.allGatherHierarchical(o, recv, dt)
		}
		return fmt.Errorf("algorithm %v does not do AllGather (use ring or hierarchical)", algo)
	})
}
