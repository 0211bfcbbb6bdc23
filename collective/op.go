package collective

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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

// send posts buf to peer as the pair's next message. The pair's first
// message travels with this rank's header when it is small enough.
func (o *operation) send(peer int, buf []byte) transport.Request {
	p := o.touch(peer)
	p.sendSeq++
	if !p.announced {
		if p.sendSeq == 1 && o.inlines(peer, buf) {
			return o.announce(peer, buf, true)
		}
		if peer != o.c.rank { // to itself, both would share a tag's receives (inlines)
			return o.announceWith(peer, buf)
		}
		o.announce(peer, nil, false)
	}
	r := o.c.ep.Send(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: p.sendSeq}, buf)
	o.reqs = append(o.reqs, r)
	return r
}

// pendingRecv is a posted data receive whose sender's header is checked
// before its bytes are trusted. The pair's first receive, when small
// (first), is posted only once the header has shown whether it carries the
// message; until then req is nil.
type pendingRecv struct {
	peer  int
	buf   []byte
	seq   uint32
	first bool
	tail  bool // posted with the header's receive (recvWithHeader); req nil until settled
	req   transport.Request
}

// recv posts a receive of the pair's next message from peer into buf; the
// message must fill buf exactly.
func (o *operation) recv(peer int, buf []byte) pendingRecv {
	p := o.touch(peer)
	p.recvSeq++
	pr := pendingRecv{peer: peer, buf: buf, seq: p.recvSeq}
	if pr.seq == 1 && peer != o.c.rank && !o.inlines(peer, buf) && o.recvWithHeader(p, peer, buf) {
		pr.tail = true
		return pr
	}
	o.postHeader(p, peer)
	if pr.seq == 1 && o.inlines(peer, buf) {
		pr.first = true
		p.firstOpen, p.firstBuf = true, buf
		return pr
	}
	pr.req = o.postRecv(peer, pr.seq, buf)
	return pr
}

// endLateHeaders ends o.lateHeaders: it posts the header receives that
// touch left to recv and recv did not post.
func (o *operation) endLateHeaders() {
	o.lateHeaders = false
	for peer := range o.peers {
		o.postHeader(&o.peers[peer], peer)
	}
}

// inlines reports whether buf, as the first message of a pair, travels
// with the sender's header: when it is small and the pair is not this rank
// with itself (whose two directions share the header tag, so that a
// point-to-point Send and Recv to oneself may take each other's header).
func (o *operation) inlines(peer int, buf []byte) bool {
	return len(buf) <= inlineBytesMax && peer != o.c.rank
}

// postRecv posts the receive of the pair's message seq from peer.
func (o *operation) postRecv(peer int, seq uint32, buf []byte) transport.Request {
	r := o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: seq}, buf)
	o.reqs = append(o.reqs, r)
	return r
}

// await waits for r, a request to or from peer (-1: several or unknown).
// It first sends this rank's header to every touched
// peer that lacks it. While it waits it looks, at growing intervals, at the
// headers that have arrived from other peers, so that a mismatch elsewhere
// ends this wait instead of leaving it to the deadline; from the first look
// on, the tree neighbours have this rank's header too. It fails with
// context.DeadlineExceeded once the operation's Config.Timeout bound has
// passed (ctx's own deadline ends it through ctx). One timer per operation,
// made on the first wait that blocks, serves both: an operation that never
// blocks (its messages were there, or came while it polled) costs none.
// A wait that has lasted lookAfter writes its state to the flight record
// at every look, and one that takes the operation past
// Config.StallTimeout reports the stall once and goes on waiting. Over an
// endpoint that must see every wait (transport.AnyWaiter), it waits as
// awaitAny does.
func (o *operation) await(r transport.Request, peer int) (int, error) {
	o.touchFarPartners()
	o.announceTouched()
	if _, ok := o.c.ep.(transport.AnyWaiter); ok { // a simulated fabric's Spin would wait without ticks
		if _, err := o.awaitFirst([]transport.Request{r}, peer); err != nil {
			return 0, err
		}
		return r.Wait(o.ctx)
	}
	if s, ok := r.(transport.Spinner); ok {
		if s.Spin(o.ctx) { // returns at once if r completed (no Done channel made)
			return r.Wait(o.ctx)
		}
	} else {
		select {
		case <-r.Done():
			return r.Wait(o.ctx)
		default:
		}
	}
	lw := o.longWait()
	defer o.timer.Stop()
	for {
		select {
		case <-r.Done():
			return r.Wait(o.ctx)
		case <-o.ctx.Done():
			return r.Wait(o.ctx)
		case <-lw.tick:
			if err := o.onTick(&lw, peer); err != nil {
				return 0, err
			}
		}
	}
}

// longWait is a wait that did not end at once: when it started, and the
// operation's timer's next tick.
type longWait struct {
	start    time.Time
	interval time.Duration
	tick     <-chan time.Time
}

// longWait arms the operation's timer for a wait that begins now.
func (o *operation) longWait() longWait {
	return longWait{start: time.Now(), interval: time.Millisecond, tick: o.armTimer(time.Millisecond)}
}

// onTick is a long wait's tick (see await): the deadline, the flight
// record and the stall report, the headers of the other peers; then it
// arms the next tick.
func (o *operation) onTick(lw *longWait, peer int) error {
	now := time.Now()
	if !o.deadline.IsZero() && !now.Before(o.deadline) {
		return context.DeadlineExceeded
	}
	if now.Sub(lw.start) >= lookAfter {
		o.look(peer, lw.start)
		o.checkStall(now)
	}
	o.touchPartners()
	o.announceTouched()
	if err := o.scanHeaders(); err != nil {
		return err
	}
	if err := o.boardPeek(); err != nil { // peers that took the board for this call
		return err
	}
	lw.interval = min(2*lw.interval, 100*time.Millisecond)
	lw.tick = o.armTimer(lw.interval)
	return nil
}

// awaitAny waits, as await does, until one of reqs has completed, and
// returns its index; the caller then takes it with its own wait, which
// returns at once. Over an endpoint that must see every wait
// (transport.AnyWaiter) the endpoint waits, woken at every tick; else the
// endpoint first polls for the requests in this goroutine, as await's
// Spin does (transport.AnySpinner), and then this rank selects on their
// Done channels. Every tick (onTick) checks the deadline and the other
// peers' headers, as await's do.
func (o *operation) awaitAny(reqs []transport.Request) (int, error) {
	return o.awaitFirst(reqs, -1)
}

// awaitFirst is awaitAny for requests to or from peer (-1: several or
// unknown), which a long wait names in the flight record.
func (o *operation) awaitFirst(reqs []transport.Request, peer int) (int, error) {
	o.touchFarPartners()
	o.announceTouched()
	if i := transport.CompletedAny(reqs); i >= 0 {
		return i, nil
	}
	w, waits := o.c.ep.(transport.AnyWaiter)
	if s, ok := o.c.ep.(transport.AnySpinner); ok && !waits {
		if i := s.SpinAny(o.ctx, reqs); i >= 0 {
			return i, nil
		}
	}
	lw := o.longWait()
	defer o.timer.Stop()
	for {
		var i int
		if waits {
			i = w.WaitAny(o.ctx, reqs, lw.tick)
		} else {
			i = selectAny(o.ctx, reqs, lw.tick)
		}
		if i >= 0 {
			return i, nil
		}
		if err := o.ctx.Err(); err != nil {
			return -1, err
		}
		if err := o.onTick(&lw, peer); err != nil {
			return -1, err
		}
	}
}

// selectAny blocks until one of reqs has completed, ctx is done or tick
// fires, and returns the index of a completed one, or -1. Two requests
// (one channel's two trees) take a select statement, which allocates
// nothing; more take reflect.Select.
func selectAny(ctx context.Context, reqs []transport.Request, tick <-chan time.Time) int {
	if len(reqs) == 2 {
		select {
		case <-reqs[0].Done():
			return 0
		case <-reqs[1].Done():
			return 1
		case <-ctx.Done():
		case <-tick:
		}
		return -1
	}
	cases := make([]reflect.SelectCase, len(reqs)+2)
	for i, r := range reqs {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.Done())}
	}
	cases[len(reqs)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	cases[len(reqs)+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tick)}
	if i, _, _ := reflect.Select(cases); i < len(reqs) {
		return i
	}
	return -1
}

// armTimer sets the operation's timer to fire after d, or at the
// operation's Config.Timeout bound if that comes first, and returns its
// channel.
func (o *operation) armTimer(d time.Duration) <-chan time.Time {
	if !o.deadline.IsZero() {
		d = min(d, time.Until(o.deadline))
	}
	if o.timer == nil {
		o.timer = time.NewTimer(d)
	} else {
		o.timer.Reset(d)
	}
	return o.timer.C
}

// waitRecv waits for a posted receive, checking the sender's header first.
func (o *operation) waitRecv(pr pendingRecv) error {
	if err := o.checkHeader(pr.peer); err != nil {
		return err
	}
	p := &o.peers[pr.peer]
	if pr.seq == 1 && p.carried && !pr.first {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, len(p.inline), len(pr.buf)))
	}
	if pr.first {
		taken, err := o.takeFirst(pr.peer)
		if taken || err != nil {
			return err
		}
		pr.req = p.firstReq
	}
	if pr.tail {
		n, r := o.settleTail(pr.peer)
		if r == nil {
			if n != len(pr.buf) {
				return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, n, len(pr.buf)))
			}
			return nil
		}
		pr.req = r
	}
	n, err := o.await(pr.req, pr.peer)
	if err != nil {
		return o.fail(o.peerErr(pr.peer, err))
	}
	if n != len(pr.buf) {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, n, len(pr.buf)))
	}
	return nil
}

// wait waits for a posted send to peer, checking peer's header first: a
// peer that called another operation may never take the message.
func (o *operation) wait(r transport.Request, peer int) error {
	if err := o.checkHeader(peer); err != nil {
		return err
	}
	if _, err := o.await(r, peer); err != nil {
		return o.fail(o.peerErr(peer, err))
	}
	return nil
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

// fail ends the operation with err: it aborts the operation on this rank
// and every other, and waits until the transport lets go of every buffer.
// It returns the error the caller should return.
func (o *operation) fail(err error) error {
	if o.err != nil {
		return o.err
	}
	if o.interrupted(err) {
		return errSettleInterrupted // not failed: settled later (eager.go)
	}
	o.err = err
	if o.onBoard || o.c.board.up.Load() {
		o.boardFail(err) // where its peers on the board look (waits, an eager root's next call)
	}
	o.c.ep.Abort(o.key, o.abort, err)
	for _, r := range o.reqs {
		r.Cancel()
	}
	for i := range o.peers {
		if r := o.peers[i].hdrReq; r != nil {
			r.Cancel()
		}
		if r := o.peers[i].early; r != nil {
			r.Cancel()
		}
	}
	return err
}

// peerErr names the communicator rank in a transport error about it.
func (o *operation) peerErr(peer int, err error) error {
	if ctxErr := o.ctx.Err(); ctxErr != nil {
		// Our own deadline passed too: that is the error to report.
		return fmt.Errorf("waiting for rank %d: %w%s%s", peer, ctxErr, o.neverArrived(), o.verdict())
	}
	var ra *transport.RemoteAbortError
	if errors.As(err, &ra) {
		return fmt.Errorf("rank %d failed: %s", o.c.commRank(ra.Rank), ra.Reason)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for rank %d: %w%s%s", peer, err, o.neverArrived(), o.verdict())
	}
	return fmt.Errorf("with rank %d: %w", peer, err)
}

// neverArrived names, for an error at the deadline, the peers this rank
// talks to whose header of the operation has not come: they never called
// it, and they, not the peer waited on, are what to look at. The abort
// carries the note to the other ranks.
func (o *operation) neverArrived() string {
	if o.onBoard {
		return o.boardNeverWrote()
	}
	var missing []int
	for i := range o.peers {
		p := &o.peers[i]
		if !p.touched || p.checked || p.hdrReq == nil {
			continue
		}
		select {
		case <-p.hdrReq.Done():
			// Ended: it came, unless the wait's end cancelled it.
			if _, err := p.hdrReq.Wait(context.Background()); err == nil {
				continue
			}
		default:
		}
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s never arrived: no header of this operation from it)", rankList(missing))
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
