package collective

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// operation is one running collective on one rank: it owns the operation's
// tag space, exchanges headers with every peer it talks to, and turns any
// failure into an abort that reaches every other rank.
//
// Headers. The first time the operation talks to a peer, in either
// direction, it sends its header to that peer and posts a receive for the
// peer's (message 0 of the pair). Every collective starts by doing so with
// both ring neighbours (touchPartners). A data receive from a peer, and a
// wait for a send to it, happen only once that peer's header matched; while
// a rank waits it also checks any other header that has arrived; finish
// checks every header. So both ends of every pair that exchanges data check
// each other, and a mismatch anywhere is found along the ring.
type operation struct {
	c     *Comm
	ctx   context.Context
	key   transport.OpKey
	hdr   header
	pairs func(peer int) (out, in uint64) // per-pair element counts, or nil
	peers []peerState                     // by communicator rank
	reqs  []transport.Request             // every request posted, for finish and fail
	err   error                           // first failure
	abort []int                           // endpoint ranks told of a failure
	done  func()                          // releases the operation's deadline
}

type peerState struct {
	touched          bool
	checked          bool
	checking         bool // a wait for this header is under way
	sendSeq, recvSeq uint32
	hdrOut, hdrIn    [headerLen]byte
	hdrReq           transport.Request
}

// begin starts a collective operation: it takes the communicator's next
// sequence number, in the caller's goroutine so that the order of calls is
// the order of operations.
func (c *Comm) begin(ctx context.Context, h header) (*operation, error) {
	seq, err := c.take()
	if err != nil {
		return nil, fmt.Errorf("gocoll: %s: %w", h.describe(), err)
	}
	return c.newOperation(ctx, h, transport.OpKey{Comm: c.id, Op: seq}, c.ranks), nil
}

// newOperation applies the communicator's default timeout when ctx has
// none; the operation's done must be called when it ends.
func (c *Comm) newOperation(ctx context.Context, h header, key transport.OpKey, abort []int) *operation {
	done := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, done = context.WithTimeout(ctx, c.cfg.Timeout)
	}
	return &operation{c: c, ctx: ctx, hdr: h, key: key, peers: make([]peerState, c.Size()),
		abort: abort, done: done}
}

// touch sends this rank's header to peer and posts the receive of peer's,
// the first time the operation talks to peer.
func (o *operation) touch(peer int) *peerState {
	p := &o.peers[peer]
	if p.touched {
		return p
	}
	p.touched = true
	h := o.hdr
	if o.pairs != nil {
		h.pairCount, _ = o.pairs(peer)
	}
	h.marshal(&p.hdrOut)
	ep, to := o.c.ep, o.c.ranks[peer]
	tag := transport.Tag{OpKey: o.key}
	o.reqs = append(o.reqs, ep.Send(to, tag, p.hdrOut[:]))
	p.hdrReq = ep.Recv(to, tag, p.hdrIn[:])
	return p
}

// send posts buf to peer as the pair's next message.
func (o *operation) send(peer int, buf []byte) transport.Request {
	p := o.touch(peer)
	p.sendSeq++
	r := o.c.ep.Send(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: p.sendSeq}, buf)
	o.reqs = append(o.reqs, r)
	return r
}

// pendingRecv is a posted data receive whose sender's header is checked
// before its bytes are trusted.
type pendingRecv struct {
	peer int
	want int
	req  transport.Request
}

// recv posts a receive of the pair's next message from peer into buf; the
// message must fill buf exactly.
func (o *operation) recv(peer int, buf []byte) pendingRecv {
	p := o.touch(peer)
	p.recvSeq++
	r := o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: p.recvSeq}, buf)
	o.reqs = append(o.reqs, r)
	return pendingRecv{peer: peer, want: len(buf), req: r}
}

// await waits for r. While it waits it looks, at growing intervals, at the
// headers that have arrived from other peers, so that a mismatch elsewhere
// ends this wait instead of leaving it to the deadline.
func (o *operation) await(r transport.Request) (int, error) {
	select {
	case <-r.Done():
		return r.Wait(o.ctx)
	default:
	}
	interval := time.Millisecond
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-r.Done():
			return r.Wait(o.ctx)
		case <-o.ctx.Done():
			return r.Wait(o.ctx)
		case <-timer.C:
			if err := o.scanHeaders(); err != nil {
				return 0, err
			}
			interval = min(2*interval, 100*time.Millisecond)
			timer.Reset(interval)
		}
	}
}

// scanHeaders checks every header that has arrived and not been checked.
func (o *operation) scanHeaders() error {
	for peer := range o.peers {
		p := &o.peers[peer]
		if !p.touched || p.checked {
			continue
		}
		select {
		case <-p.hdrReq.Done():
			if err := o.checkHeader(peer); err != nil {
				return err
			}
		default:
		}
	}
	return nil
}

// touchPartners exchanges headers with both ring neighbours, which depend
// on nothing but the communicator. So ranks that called different operations
// still exchange headers along a connected graph (the ring): somewhere two
// neighbours disagree, and each checks the other's header while it waits
// or when it finishes, so a mismatch is always found.
func (o *operation) touchPartners() {
	n, r := o.c.Size(), o.c.rank
	if n > 1 {
		o.touch(mod(r+1, n))
		o.touch(mod(r-1, n))
	}
}

// waitRecv waits for a posted receive, checking the sender's header first.
func (o *operation) waitRecv(pr pendingRecv) error {
	if err := o.checkHeader(pr.peer); err != nil {
		return err
	}
	n, err := o.await(pr.req)
	if err != nil {
		return o.fail(o.peerErr(pr.peer, err))
	}
	if n != pr.want {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, n, pr.want))
	}
	return nil
}

// wait waits for a posted send to peer, checking peer's header first: a
// peer that called another operation may never take the message.
func (o *operation) wait(r transport.Request, peer int) error {
	if err := o.checkHeader(peer); err != nil {
		return err
	}
	if _, err := o.await(r); err != nil {
		return o.fail(o.peerErr(peer, err))
	}
	return nil
}

// checkHeader waits for peer's header and compares it with this rank's.
func (o *operation) checkHeader(peer int) error {
	if o.err != nil {
		return o.err
	}
	p := &o.peers[peer]
	if p.checked {
		return nil
	}
	if p.checking {
		return nil // scanHeaders called from the wait below
	}
	p.checking = true
	n, err := o.await(p.hdrReq)
	p.checking = false
	if err != nil {
		return o.fail(o.peerErr(peer, err))
	}
	theirs, err := parseHeader(p.hdrIn[:n])
	if err != nil {
		return o.fail(fmt.Errorf("from rank %d: %w", peer, err))
	}
	mine := o.hdr
	if o.pairs != nil {
		_, mine.pairCount = o.pairs(peer)
	}
	if err := mismatch(mine, o.c.rank, theirs, peer); err != nil {
		return o.fail(err)
	}
	p.checked = true
	return nil
}

// finish checks every header and waits for every request still pending.
func (o *operation) finish() error {
	if o.err != nil {
		return o.err
	}
	for peer := range o.peers {
		if o.peers[peer].touched {
			if err := o.checkHeader(peer); err != nil {
				return err
			}
		}
	}
	for _, r := range o.reqs {
		if _, err := o.await(r); err != nil {
			return o.fail(err)
		}
	}
	return nil
}

// fail ends the operation with err: it aborts the operation on this rank
// and every other, and waits until the transport lets go of every buffer.
// It returns the error the caller should return.
func (o *operation) fail(err error) error {
	if o.err != nil {
		return o.err
	}
	o.err = err
	o.c.ep.Abort(o.key, o.abort, err)
	for _, r := range o.reqs {
		r.Cancel()
	}
	for i := range o.peers {
		if r := o.peers[i].hdrReq; r != nil {
			r.Cancel()
		}
	}
	return err
}

// peerErr names the communicator rank in a transport error about it.
func (o *operation) peerErr(peer int, err error) error {
	if ctxErr := o.ctx.Err(); ctxErr != nil {
		// Our own deadline passed too: that is the error to report.
		return fmt.Errorf("waiting for rank %d: %w", peer, ctxErr)
	}
	var ra *transport.RemoteAbortError
	if errors.As(err, &ra) {
		return fmt.Errorf("rank %d failed: %s", o.c.commRank(ra.Rank), ra.Reason)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for rank %d: %w", peer, err)
	}
	return fmt.Errorf("with rank %d: %w", peer, err)
}

// execute runs body as the operation, then checks every header and waits
// for every request; it returns the error wrapped with what was called and
// where. It ends the operation.
func (o *operation) execute(body func(o *operation) error) error {
	defer o.done()
	if err := body(o); err != nil {
		return o.wrap(o.fail(err))
	}
	if err := o.finish(); err != nil {
		return o.wrap(err)
	}
	return nil
}

func (o *operation) wrap(err error) error {
	return fmt.Errorf("gocoll: %s on rank %d of %d: %w", o.hdr.describe(), o.c.rank, o.c.Size(), err)
}
