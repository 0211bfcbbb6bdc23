package collective

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/tune"
)

// allToAll validates and launches an AllToAll: block j of send goes to rank
// j, and block i of recv comes from rank i; blocks are len(send)/n bytes.
func (c *Comm) allToAll(ctx context.Context, send, recv []byte, dt dtype.DataType, sync bool) *Handle {
	n := c.Size()
	count := len(send) / esize(dt) / n
	h := header{kind: KindAllToAll, dt: dt, root: -1, count: uint64(count), algo: AlgoPairwise}
	if len(send)%n == 0 && c.onBoard(tune.BoardAllToAll, len(send)/n, false) {
		h.algo = AlgoBoard
	}
	return c.launchArgs(ctx, h, sync, opArgs{send: send, recv: recv}, func(o *operation) error {
		c, send, recv, dt := o.c, o.args.send, o.args.recv, o.hdr.dt
		n := c.Size()
		if err := firstErr(checkType(dt), checkWhole("send", send, dt)); err != nil {
			return err
		}
		if len(send)%(n*esize(dt)) != 0 {
			return fmt.Errorf("send buffer of %d elements does not split into %d equal blocks", len(send)/esize(dt), n)
		}
		if err := firstErr(checkLen("recv", recv, len(send), dt), checkDisjoint("send", send, "recv", recv)); err != nil {
			return err
		}
		if o.hdr.algo == AlgoBoard {
			on, err := o.boardEnter()
			if err != nil {
				return err
			}
			if on {
				return c.allToAllBoard(o, send, recv)
			}
		}
		b := len(send) / n
		block := func(buf []byte, i int) []byte { return buf[i*b : (i+1)*b] }
		return c.pairwise(o, func(p int) []byte { return block(send, p) }, func(p int) []byte { return block(recv, p) })
	})
}

// checkDisjoint reports buffers that share memory (AllToAll has no in-place
// form: a block would be overwritten before it is sent).
func checkDisjoint(aName string, a []byte, bName string, b []byte) error {
	if len(a) > 0 && sameRegion(a, b) {
		return fmt.Errorf("%s and %s are the same buffer; AllToAll needs separate ones", aName, bName)
	}
	return checkAlias(aName, a, bName, b)
}

// pairwise exchanges blocks in n-1 rounds: in round k, rank r sends to r+k
// and receives from r-k, so every rank sends to and receives from exactly
// one peer per round and no rank is a hot spot. Two rounds of sends are
// kept in flight so the next round's transfer overlaps this round's wait;
// when all of this rank's sends together are at most Config.SmallBytes,
// every send is posted at once, so a small exchange costs one latency
// instead of a chain of rounds (rank r's round-3 send no longer waits for
// its round-1 receive). On shared memory every send is posted at once at
// any size: a send there only announces the buffer (the receiver copies
// out of it), so holding rounds back saves nothing and makes each rank's
// later sends wait for its earlier peers to be scheduled and copy, which,
// with more ranks than cores, leaves ready copies idle.
// Every receive is posted first (each lands in its own block): a peer that
// runs rounds ahead then finds its receive waiting, instead of leaving its
// block to the transport as an unexpected message (held and copied again;
// on MetaRoCE, stalled at the unexpected-byte budget). On shared memory the
// sends go first: posting a receive whose message is there copies it at
// once, and the peers waiting to copy this rank's blocks should not wait
// for those copies; a block that comes before its receive is held there
// as an announcement, not copied twice. There the receive of each peer's
// header waits for the receive of its block (o.lateHeaders), so that a
// transport that can takes both in one request (recvWithHeader): one
// receive a pair instead of two, matched, completed and released once.
func (c *Comm) pairwise(o *operation, sendBlock, recvBlock func(peer int) []byte) error {
	n, r := c.Size(), c.rank
	inFlight, total := 2, 0
	for k := 1; k < n; k++ {
		total += len(sendBlock(mod(r+k, n)))
	}
	if total <= c.cfg.SmallBytes || c.shared {
		inFlight = n - 1
	}
	var recvsInline [pairwiseInline]pendingRecv
	var sendsInline [pairwiseInline]pendingSend
	recvs, sends := recvsInline[:], sendsInline[:] // by round
	if n > pairwiseInline {
		recvs, sends = make([]pendingRecv, n), make([]pendingSend, n)
	}
	postSends := func() {
		for k := 1; k < n && k <= inFlight; k++ {
			to := mod(r+k, n)
			sends[k] = pendingSend{o.send(to, sendBlock(to)), to}
		}
	}
	if c.shared {
		o.lateHeaders = true // each header's receive goes with the pair's data receive
		postSends()
	}
	for k := 1; k < n; k++ {
		from := mod(r-k, n)
		recvs[k] = o.recv(from, recvBlock(from))
	}
	o.endLateHeaders()
	if !c.shared {
		postSends()
	}
	// This rank's own block is copied once every receive and the first
	// sends are posted, while the peers copy theirs, not before.
	copy(recvBlock(r), sendBlock(r))
	for k := 1; k < n; k++ {
		if err := o.waitRecv(recvs[k]); err != nil {
			return err
		}
		if err := sends[k].wait(o); err != nil {
			return err
		}
		if next := k + inFlight; next < n {
			to := mod(r+next, n)
			sends[next] = pendingSend{o.send(to, sendBlock(to)), to}
		}
	}
	return nil
}

// pairwiseInline is the communicator size up to which pairwise keeps its
// per-round state on the stack.
const pairwiseInline = 16

// allToAllV validates and launches an AllToAllV: rank r sends sendCounts[j]
// elements from send[sendDispls[j]:] to rank j, and receives recvCounts[i]
// elements from rank i into recv[recvDispls[i]:]. Each pair's counts are
// checked against each other.
func (c *Comm) allToAllV(ctx context.Context, send []byte, sendCounts, sendDispls []int,
	recv []byte, recvCounts, recvDispls []int, dt dtype.DataType, sync bool) *Handle {
	n := c.Size()
	pairs := func(p int) (uint64, uint64) {
		if p < len(sendCounts) && p < len(recvCounts) {
			return uint64(sendCounts[p]), uint64(recvCounts[p])
		}
		return 0, 0
	}
	h := header{kind: KindAllToAllV, dt: dt, root: -1, count: 0, algo: AlgoPairwise}
	return c.launch(ctx, h, pairs, sync, func(o *operation) error {
		if err := checkType(dt); err != nil {
			return err
		}
		if err := firstErr(checkLayout("send", send, sendCounts, sendDispls, n, dt),
			checkLayout("recv", recv, recvCounts, recvDispls, n, dt), checkDisjoint("send", send, "recv", recv)); err != nil {
			return err
		}
		if sendCounts[c.rank] != recvCounts[c.rank] {
			return fmt.Errorf("sendCounts[%d]=%d but recvCounts[%d]=%d for this rank's own block", c.rank, sendCounts[c.rank], c.rank, recvCounts[c.rank])
		}
		if err := o.checkAllHeaders(); err != nil {
			return err
		}
		es := esize(dt)
		region := func(buf []byte, counts, displs []int, p int) []byte {
			return buf[displs[p]*es : (displs[p]+counts[p])*es]
		}
		return c.pairwise(o, func(p int) []byte { return region(send, sendCounts, sendDispls, p) },
			func(p int) []byte { return region(recv, recvCounts, recvDispls, p) })
	})
}

// checkAllHeaders exchanges headers with every peer and checks them all
// before any data moves. AllToAllV needs it: only the two ranks of a pair
// can compare its counts, so a rank must not send data to anyone until it
// knows its counts agree with everyone's; a rank that finds a disagreement
// then sends nothing, and every other rank, which needs its data, fails
// through its abort instead of finishing. It costs one header latency.
func (o *operation) checkAllHeaders() error {
	for p := range o.peers {
		if p != o.c.rank {
			o.touch(p)
		}
	}
	o.announceTouched()
	for p := range o.peers {
		if p != o.c.rank {
			if err := o.checkHeader(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLayout validates AllToAllV counts and displacements against buf.
func checkLayout(name string, buf []byte, counts, displs []int, n int, dt dtype.DataType) error {
	if len(counts) != n || len(displs) != n {
		return fmt.Errorf("%s counts and displacements need %d entries each, have %d and %d", name, n, len(counts), len(displs))
	}
	elems := len(buf) / esize(dt)
	for p := 0; p < n; p++ {
		if counts[p] < 0 || displs[p] < 0 || displs[p]+counts[p] > elems {
			return fmt.Errorf("%s block for rank %d (displacement %d, count %d) outside the %d-element buffer", name, p, displs[p], counts[p], elems)
		}
	}
	return checkWhole(name, buf, dt)
}
