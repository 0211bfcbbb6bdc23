package collective

import (
	"context"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// operation is one running collective on one rank: it owns the operation's
// tag space, exchanges headers with every peer it talks to, and turns any
// failure into an abort that reaches every other rank.
//
// Headers. Message 0 of every pair, in each direction, is the sender's
// header (exchange.go). The first time the operation talks to a peer it
// posts the receive of the peer's header (touch); where an algorithm sends
// before it receives (pairwise over shared memory) the receive waits for
// the pair's first data receive, and where the endpoint can
// (transport.HeadReceiver) one request takes the header and the data
// message sent in its transfer (recvWithHeader). Its own header goes with
// the first data message it sends to the peer, in the same message when
// that one is small, or else before this rank next blocks: no rank waits
// while a peer it talks to lacks its header. Every collective also
// exchanges headers with this rank's neighbours in a binomial spanning tree
// of the communicator (touchPartners), which depends on nothing but the
// communicator; where they are not data partners, those headers go once a
// wait has lasted a millisecond, or at finish. A data receive from a peer,
// and a wait for a send to it, happen only once that peer's header
// matched; while a rank waits it also checks any other header that has
// arrived; finish checks every header. So both ends of every pair that
// exchanges data check each other, ranks that called different operations
// still exchange headers along a connected graph, and a mismatch anywhere
// is found.
type operation struct {
	c            *Comm
	ctx          context.Context
	key          transport.OpKey
	hdr          header
	args         opArgs                          // the body's buffers (launchArgs)
	pairs        func(peer int) (out, in uint64) // per-pair element counts, or nil
	peers        []peerState                     // by communicator rank
	reqs         []transport.Request             // every request posted, for finish and fail
	err          error                           // first failure
	abort        []int                           // endpoint ranks told of a failure
	deadline     time.Time                       // Config.Timeout's bound when ctx has no deadline, else zero
	timer        *time.Timer                     // await's, made on the first wait that blocks
	partners     bool                            // a collective: exchange headers along the tree
	treeTouched  bool                            // touchPartners has run
	farTouched   bool                            // touchFarPartners has run
	unannounced  int                             // touched peers that lack this rank's header
	lateHeaders  bool                            // touch leaves header receives to recv (pairwise)
	hdrBufs      []*[headerMsgMax]byte           // header buffers lent by headerBufs
	start        time.Time                       // when the operation began
	flightID     uint64                          // its flight record (flight.go)
	stalled      bool                            // its stall was reported (stall.go)
	sync         bool                            // a blocking call (dispatch)
	eager        bool                            // returns before its confirmation (eager.go)
	settling     bool                            // settled under a later call's context (settleDeferred)
	order        uint64                          // its place among the communicator's calls (eagerState.enter)
	eagerLease   lease                           // an eager call's copy of its buffer
	boardTicket  uint64                          // a board call's place among this rank's (board.go), else 0
	onBoard      bool                            // it runs on the board (boardEnter)
	boardWrote   bool                            // it wrote its slot (boardPublish)
	bw           boardWait                       // what its board wait waits for (boardAwait)
	boardReadyFn func() bool                     // o.boardReady, made once, kept by release
	boardSlot    int                             // its slot on the board (boardEnter, slotOf)
	steady       bool                            // a board Broadcast may return early (trackLocked, boardSteady)
	liveAt       int                             // its place in Comm.abort.live, plus 1 (0: not tracked)

	// Initial backing of reqs, hdrBufs and peers, enough for a small
	// collective on a small communicator: reqs holds up to three requests
	// per peer (an AllToAll above the inline limit posts a header send, a
	// data send and a data receive to each).
	reqsInline    [3 * peersInlineMax]transport.Request
	hdrBufsInline [2 * peersInlineMax]*[headerMsgMax]byte
	peersInline   [peersInlineMax]peerState

	// The first ring of the operation (newRing) and what a small ring
	// AllGather needs, for a small communicator: its schedule, the
	// geometry's offsets, the sends and the posted receives.
	ringUsed      bool
	ringInline    ring
	agInline      allGatherRing
	offInline     [peersInlineMax + 1]int
	ringSendsIn   [2 * peersInlineMax]transport.Request
	ringPendingIn [peersInlineMax]pendingRecv
}

// opArgs are a collective's buffers and root, kept in its operation by
// launchArgs so that its body can be a function literal that captures
// nothing, which costs no allocation per call; the body's other arguments
// are in o.hdr (dt, op, algo).
type opArgs struct {
	send, recv []byte
	root       int
}

// launchArgs is Comm.launch for a body that reads its buffers and root
// from o.args.
func (c *Comm) launchArgs(ctx context.Context, h header, sync bool, a opArgs, body func(*operation) error) *Handle {
	if h.algo == AlgoTree && h.dt.Size() > 0 { // the trees' channels, checked as the rings'
		h.channels = uint8(c.treeChannels(h.kind, int(h.count)*h.dt.Size(), int(h.root)))
	}
	o, err := c.begin(ctx, h)
	if err != nil {
		return failedHandle(err)
	}
	o.args = a
	return o.dispatch(sync, body)
}

// peersInlineMax is the communicator size up to which an operation's
// per-peer state lives in the operation itself (one allocation less).
const peersInlineMax = 8

// begin starts a collective operation: it takes the communicator's next
// sequence number, in the caller's goroutine so that the order of calls is
// the order of operations.
func (c *Comm) begin(ctx context.Context, h header) (*operation, error) {
	seq, order, ticket, err := c.take(h.algo == AlgoBoard)
	if err != nil {
		return nil, fmt.Errorf("gocoll: %s: %w", h.describe(), err)
	}
	o := c.newOperation(ctx, h, transport.OpKey{Comm: c.id, Op: seq}, c.ranks)
	o.partners, o.order, o.boardTicket = true, order, ticket
	return o, nil
}

// newOperation bounds the operation by the communicator's Config.Timeout
// from now when ctx has no deadline of its own (see await).
func (c *Comm) newOperation(ctx context.Context, h header, key transport.OpKey, abort []int) *operation {
	o, _ := c.operations.Get().(*operation) // zero but for its timer (release)
	if o == nil {
		o = new(operation)
	}
	o.c, o.ctx, o.hdr, o.key, o.abort = c, ctx, h, key, abort
	if n := c.Size(); n <= peersInlineMax {
		o.peers = o.peersInline[:n]
	} else {
		o.peers = make([]peerState, n)
	}
	o.reqs = o.reqsInline[:0]
	o.hdrBufs = o.hdrBufsInline[:0]
	o.start = opNow()
	if _, ok := ctx.Deadline(); !ok {
		o.deadline = o.start.Add(c.cfg.Timeout)
	}
	o.record()
	return o
}

// finish checks every header, takes the small first messages nobody
// waited for, and waits for every request still pending.
func (o *operation) finish() error {
	if o.err != nil {
		return o.err
	}
	o.touchPartners()
	o.announceTouched()
	for peer := range o.peers {
		if !o.peers[peer].touched {
			continue
		}
		if err := o.checkHeader(peer); err != nil {
			return err
		}
		if err := o.finishFirst(peer); err != nil {
			return err
		}
		if err := o.finishTail(peer); err != nil {
			return err
		}
	}
	for _, r := range o.reqs {
		if _, err := o.await(r, -1); err != nil {
			return o.fail(err)
		}
	}
	return nil
}

// execute runs body as the operation, then checks every header and waits
// for every request; it returns the error wrapped with what was called and
// where. It ends the operation, unless the body made it an eager call
// (eager.go): then settleDeferred ends it later. It first settles the
// communicator's deferred eager call: if that failed, so does this one,
// before it sends anything.
func (o *operation) execute(body func(o *operation) error) error {
	tracked, err := o.c.trackFirst(o) // nothing to settle: tracked at once
	var settled error
	if !tracked {
		settled = o.c.settleDeferred(o.ctx, o) // the last call, which returned early (eager.go)
	}
	if settled == nil && o.c.board.host != nil {
		settled = o.c.board.rootFailed(o.c) // a Broadcast it was root of, on the board
	}
	if !tracked {
		err = o.c.track(o)
	}
	if err != nil { // aborted (abort.go)
		body = func(*operation) error { return err }
	} else if settled != nil {
		body = func(*operation) error { return settled }
	}
	if err := body(o); err != nil {
		return o.end(o.fail(err))
	}
	if o.eager {
		return o.deferEnd()
	}
	if o.onBoard {
		return o.end(o.boardFinish())
	}
	return o.end(o.finish())
}

// end ends the operation once finish or fail has settled every request,
// with err (nil, or their error): it hands back what the operation holds
// and returns err wrapped with what was called and where.
func (o *operation) end(err error) error {
	if o.boardTicket != 0 {
		o.boardLeave()
	}
	o.releaseRequests()
	o.releaseHeaderBufs()
	o.eagerLease.release()
	if err != nil {
		err = o.wrap(err)
	}
	o.recordEnd(err)
	err = o.c.untrack(o, err)
	o.release()
	return err
}

// releaseRequests hands every request of the operation back to its
// transport (transport.Release), each once: those in o.reqs and the header
// receives (not in o.reqs). Only execute calls it, once finish or fail has
// settled every request; a request the transport has not completed is not
// reused by it. The algorithms keep no request past their body.
func (o *operation) releaseRequests() {
	for i, r := range o.reqs {
		transport.Release(r)
		o.reqs[i] = nil
	}
	for i := range o.peers {
		p := &o.peers[i]
		if p.hdrReq != nil {
			transport.Release(p.hdrReq)
			p.hdrReq = nil
		}
		if p.early != nil { // cancelled by fail
			transport.Release(p.early)
			p.early = nil
		}
	}
}

// release gives back an operation that has ended: execute calls it once
// the operation is untracked and nothing refers to it any more (the
// algorithms start no goroutines; errors keep no reference to it). It
// drops every reference the operation held, and keeps its timer, stopped
// by await, and its boardReadyFn (bound to itself), for the next operation
// of the same communicator.
func (o *operation) release() {
	t, c, rf := o.timer, o.c, o.boardReadyFn
	*o = operation{}
	o.timer, o.boardReadyFn = t, rf
	c.operations.Put(o)
}

func (o *operation) wrap(err error) error {
	return fmt.Errorf("gocoll: %s on rank %d of %d: %w", o.hdr.describe(), o.c.rank, o.c.Size(), err)
}
