package simnet

import (
	"context"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// abortMemory bounds the ended operations each endpoint remembers.
const abortMemory = 4096

// Endpoint is one rank of a World.
type Endpoint struct {
	w          *World
	rank       int
	closed     bool
	recvs      map[key][]*request  // posted receives without a message
	sends      map[key][]*transfer // messages to this rank without a receive
	own        map[*request]struct{}
	aborted    map[transport.OpKey]error
	abortOrder []transport.OpKey
	waits      int // goroutines waiting on this rank's requests
}

var (
	_ transport.Endpoint  = (*Endpoint)(nil)
	_ transport.AnyWaiter = (*Endpoint)(nil)
)

// Rank is this endpoint's rank.
func (e *Endpoint) Rank() int { return e.rank }

// Size is the number of ranks.
func (e *Endpoint) Size() int { return len(e.w.eps) }

const (
	statePending = iota
	stateMatched
	stateDone
)

type request struct {
	ep      *Endpoint
	isSend  bool
	peer    int
	tag     transport.Tag
	buf     []byte
	done    chan struct{}
	state   int
	n       int
	err     error
	waiters int
	group   *anyWait  // a WaitAny on this request among others
	tr      *transfer // a send's; a receive's once matched
}

// anyWait is one goroutine waiting in WaitAny: it counts once in its
// endpoint's waits until the first of its requests completes.
type anyWait struct {
	waiting bool
	done    chan struct{}
}

func (r *request) settled() bool { return r.state == stateDone }

// complete ends r, with the world's lock held.
func (r *request) complete(n int, err error) {
	if r.state == stateDone {
		return
	}
	r.state, r.n, r.err = stateDone, n, err
	close(r.done)
	e := r.ep
	delete(e.own, r)
	for ; r.waiters > 0; r.waiters-- {
		e.unwait()
	}
	if g := r.group; g != nil && g.waiting {
		g.waiting = false
		close(g.done)
		e.unwait()
	}
	r.group = nil
}

// sleep counts this goroutine as waiting on e, lets the world advance, and
// blocks until done is closed, ctx ends or wake is ready (nil: never) and
// counts; it is called, and returns, with the world's lock held. Whoever
// closes done uncounts the wait; on ctx's end or wake the caller does
// (unwait). A wake (real time) counts once the world is stuck (every live
// rank waits and nothing moves), or once it has stood still for a while
// with a live rank that does not wait (stillness: a rank that is absent,
// or whose goroutine ended without Close, and nothing else moves): so a
// run whose ranks go on (each calls the transport within idleWake of real
// time) does the same in virtual time whatever the ticks, and a deadline
// still ends a wait for a rank that never comes.
func (e *Endpoint) sleep(ctx context.Context, done <-chan struct{}, wake <-chan time.Time) {
	w := e.w
	e.waits++
	if e.waits == 1 {
		w.waiting++
	}
	var stuck <-chan struct{}
	if w.settle() {
		stuck = closedChan
	} else if wake != nil {
		stuck = w.stuckChan()
	}
	var still stillness
	if wake != nil {
		still = stillness{w: w, moves: w.moves, since: time.Now()}
	}
	w.mu.Unlock()
	defer still.stop()
	woke := false // wake came, and did not count then
	for {
		select {
		case <-done:
		case <-ctx.Done():
		case <-stuck: // a wake counts now
			if !woke {
				select {
				case <-done:
				case <-ctx.Done():
				case <-wake:
				}
			}
		case <-wake: // the world is not stuck (or just got so: stuck is ready next)
			woke, wake = true, nil
			if !still.enough() {
				continue
			}
		case <-still.check():
			if !still.enough() {
				continue
			}
		}
		break
	}
	w.mu.Lock()
}

// unwait ends one goroutine's wait on this endpoint.
func (e *Endpoint) unwait() {
	e.waits--
	if e.waits == 0 {
		e.w.waiting--
	}
}

// WaitAny waits in virtual time until one of reqs has completed and
// returns its index, or -1 once ctx is done or wake was received from
// (transport.AnyWaiter). A request of another endpoint or transport counts
// as completed. A wake (a tick of real time) counts only while the world
// is stuck or stands still (see sleep): then the caller may look around
// (its deadline, its peers' headers) and wait again.
func (e *Endpoint) WaitAny(ctx context.Context, reqs []transport.Request, wake <-chan time.Time) int {
	w := e.w
	w.mu.Lock()
	for i, q := range reqs {
		if r, ok := q.(*request); !ok || r.ep != e || r.state == stateDone {
			w.mu.Unlock()
			return i
		}
	}
	g := &anyWait{waiting: true, done: make(chan struct{})}
	for _, q := range reqs {
		q.(*request).group = g
	}
	e.sleep(ctx, g.done, wake)
	defer w.mu.Unlock()
	if g.waiting { // ctx ended or wake came first
		g.waiting = false
		e.unwait()
	}
	for i, q := range reqs {
		r := q.(*request)
		if r.group == g {
			r.group = nil
		}
		if r.state == stateDone {
			return i
		}
	}
	return -1
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (e *Endpoint) failed(err error) *request {
	r := &request{ep: e, done: make(chan struct{}), state: stateDone, err: err}
	close(r.done)
	return r
}

func (e *Endpoint) newRequest(isSend bool, peer int, tag transport.Tag, buf []byte) *request {
	r := &request{ep: e, isSend: isSend, peer: peer, tag: tag, buf: buf, done: make(chan struct{})}
	if e.own == nil {
		e.own = map[*request]struct{}{}
	}
	e.own[r] = struct{}{}
	return r
}

// check is the error of a request posted now, or nil.
func (e *Endpoint) check(peer int, op transport.OpKey) error {
	switch {
	case e.closed:
		return transport.ErrClosed
	case peer < 0 || peer >= e.Size():
		return &transport.PeerError{Rank: peer, Err: transport.ErrBadRank}
	}
	return e.aborted[op]
}

// Send posts buf to peer under tag.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := e.check(peer, tag.OpKey); err != nil {
		return e.failed(err)
	}
	s := e.newRequest(true, peer, tag, buf)
	dst := w.eps[peer]
	switch {
	case dst.closed:
		s.complete(0, &transport.PeerError{Rank: peer, Err: transport.ErrClosed})
	case dst.aborted[tag.OpKey] != nil:
		s.complete(len(buf), nil) // dropped on arrival
	default:
		tr := &transfer{s: s, start: w.now}
		s.tr = tr
		w.posted = append(w.posted, tr)
		k := key{e.rank, tag}
		if q := dst.recvs[k]; len(q) > 0 {
			dst.recvs[k] = popRecv(q)
			tr.r = q[0]
			q[0].tr = tr
		} else {
			dst.sends[k] = append(dst.sends[k], tr)
		}
	}
	w.advance()
	return s
}

// Recv posts a receive from peer under tag into buf.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := e.check(peer, tag.OpKey); err != nil {
		return e.failed(err)
	}
	r := e.newRequest(false, peer, tag, buf)
	k := key{peer, tag}
	if q := e.sends[k]; len(q) > 0 {
		tr := q[0]
		e.sends[k] = q[1:]
		if len(e.sends[k]) == 0 {
			delete(e.sends, k)
		}
		tr.r, r.tr = r, tr
		if tr.arrived {
			w.deliver(tr, tr.data)
		}
	} else {
		e.recvs[k] = append(e.recvs[k], r)
	}
	w.advance()
	return r
}

func popRecv(q []*request) []*request {
	if len(q) == 1 {
		return nil
	}
	return q[1:]
}

// drop takes an unmatched transfer out of this mailbox.
func (e *Endpoint) drop(tr *transfer) {
	k := key{tr.s.ep.rank, tr.s.tag}
	q := e.sends[k]
	for i, x := range q {
		if x == tr {
			e.sends[k] = append(q[:i:i], q[i+1:]...)
			if len(e.sends[k]) == 0 {
				delete(e.sends, k)
			}
			return
		}
	}
}

// unqueue takes an unmatched receive out of this mailbox.
func (e *Endpoint) unqueue(r *request) {
	k := key{r.peer, r.tag}
	q := e.recvs[k]
	for i, x := range q {
		if x == r {
			e.recvs[k] = append(q[:i:i], q[i+1:]...)
			if len(e.recvs[k]) == 0 {
				delete(e.recvs, k)
			}
			return
		}
	}
}

// Abort ends op here and on peers.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	e.end(op, fmt.Errorf("simnet: operation aborted: %w", reason))
	for _, p := range peers {
		if p >= 0 && p < len(w.eps) && p != e.rank {
			w.eps[p].end(op, &transport.RemoteAbortError{Rank: e.rank, Op: op, Reason: reason.Error()})
		}
	}
	w.advance()
}

// end fails op's requests on this rank and drops its later messages.
func (e *Endpoint) end(op transport.OpKey, err error) {
	if e.aborted[op] != nil {
		return
	}
	e.aborted[op] = err
	e.abortOrder = append(e.abortOrder, op)
	if len(e.abortOrder) > abortMemory {
		delete(e.aborted, e.abortOrder[0])
		e.abortOrder = e.abortOrder[1:]
	}
	for r := range e.own {
		if r.tag.OpKey == op {
			if !r.isSend && r.tr == nil {
				e.unqueue(r)
			}
			r.complete(0, err)
		}
	}
	for k, q := range e.sends {
		if k.tag.OpKey == op {
			for _, tr := range q {
				tr.s.complete(len(tr.s.buf), nil) // dropped on arrival
			}
			delete(e.sends, k)
		}
	}
}

// Close fails this rank's pending requests and the messages waiting for it.
func (e *Endpoint) Close() error {
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	for r := range e.own {
		if !r.isSend && r.tr == nil {
			e.unqueue(r)
		}
		r.complete(0, transport.ErrClosed)
	}
	for k, q := range e.sends {
		for _, tr := range q {
			tr.s.complete(0, &transport.PeerError{Rank: e.rank, Err: transport.ErrClosed})
		}
		delete(e.sends, k)
	}
	w.live--
	w.advance()
	return nil
}

// Done is closed when the request has completed or failed.
func (r *request) Done() <-chan struct{} { return r.done }

// Wait waits in virtual time for the request.
func (r *request) Wait(ctx context.Context) (int, error) {
	if !r.wait(ctx) {
		return 0, ctx.Err()
	}
	return r.n, r.err
}

// Spin waits like Wait: in the simulation, waiting is what lets time pass.
func (r *request) Spin(ctx context.Context) bool { return r.wait(ctx) }

// Cancel withdraws the request; a matched transfer then ends without
// touching the buffers.
func (r *request) Cancel() {
	w := r.ep.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !r.isSend && r.tr == nil {
		r.ep.unqueue(r)
	}
	w.moves++
	r.complete(0, transport.ErrCancelled)
}

// wait counts this goroutine as waiting until r is done or ctx ends, and
// reports whether r is done.
func (r *request) wait(ctx context.Context) bool {
	e := r.ep
	w := e.w
	w.mu.Lock()
	if r.state == stateDone {
		w.mu.Unlock()
		return true
	}
	r.waiters++
	e.sleep(ctx, r.done, nil)
	defer w.mu.Unlock()
	if r.state != stateDone {
		r.waiters--
		e.unwait()
		return false
	}
	return true
}
