//go:build linux

package shm

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// Request states. A receive moves from pending (queued) to copying (a
// goroutine is filling its buffer) to done; a send stays pending until its
// receiver marks it copied or it is withdrawn. Moves out of pending happen under the
// endpoint's lock.
const (
	statePending int32 = iota
	stateCopying
	stateDone
	stateFree // released (Release) and kept for reuse; newRequest makes it pending
)

// request is the transport.Request of shm.
type request struct {
	ep     *Endpoint // nil for a request that failed at once
	isSend bool
	buf    []byte
	key    matchKey // for a send: the destination rank and tag
	// A rendezvous send's word in this rank's send table, and the
	// generation it was posted under; index -1 for other requests.
	index int
	gen   uint64
	// live is a rendezvous send's place among the endpoint's sends in
	// flight (sendTable), -1 when it is not there.
	live int
	// endErr, set under the endpoint's lock, is the error a claimed send
	// completes with when its copy ends: its operation ended meanwhile.
	endErr error

	// proof takes the peer's nonce read with a rendezvous copy's data
	// (readRemote).
	proof [8]byte

	// A receive of RecvHead: tail is the buffer for the message that may
	// come with the head, tailKey its match key; tailN and tailOK, set
	// before the request completes, say what came (Tail).
	tail    []byte
	tailKey matchKey
	tailN   int
	tailOK  bool

	state atomic.Int32
	n     int
	err   error

	// The completion: finished is set, and done (made by the first Done
	// before it) closed, under doneMu, once n and err are final. A request
	// nobody waited on in a channel makes none.
	doneMu   sync.Mutex
	done     chan struct{}
	finished atomic.Bool
}

var (
	_ transport.Request      = (*request)(nil)
	_ transport.Spinner      = (*request)(nil)
	_ transport.Releaser     = (*request)(nil)
	_ transport.Completer    = (*request)(nil)
	_ transport.TailReceiver = (*request)(nil)
	_ transport.AnySpinner   = (*Endpoint)(nil)
	_ transport.JointSpinner = (*Endpoint)(nil)
)

// reqFreeMax is how many released requests an endpoint keeps for reuse.
const reqFreeMax = 256

// newRequest returns a pending request: one released to e (Release) if it
// keeps any, else a new one. The caller holds e.mu, and e is not closed, so
// that Close's waits never see a request reused.
func newRequest(e *Endpoint, isSend bool, buf []byte, key matchKey) *request {
	n := len(e.reqFree)
	if n == 0 {
		return &request{ep: e, isSend: isSend, buf: buf, key: key, index: -1, live: -1}
	}
	r := e.reqFree[n-1]
	e.reqFree[n-1] = nil
	e.reqFree = e.reqFree[:n-1]
	r.ep, r.isSend, r.buf, r.key, r.index, r.live, r.gen, r.endErr = e, isSend, buf, key, -1, -1, 0, nil
	r.n, r.err, r.done = 0, nil, nil
	r.tail, r.tailKey, r.tailN, r.tailOK = nil, matchKey{}, 0, false
	r.state.Store(statePending)
	r.finished.Store(false)
	return r
}

// Release implements transport.Releaser: a completed request goes back to
// its endpoint, which hands it to a later Send or Recv. Every request the
// endpoint held it in (queues, the send table) dropped it before it
// completed, so only the caller can still refer to it, and by Release's
// contract will not. A request that has not completed (a copy that
// outlived Cancel's bound) is left to the garbage collector.
func (r *request) Release() {
	e := r.ep
	if e == nil {
		return
	}
	r.doneMu.Lock() // the completer has left complete
	fin := r.finished.Load()
	r.doneMu.Unlock()
	if !fin || !r.state.CompareAndSwap(stateDone, stateFree) {
		return // not completed, or released already: kept at most once
	}
	r.buf, r.tail, r.endErr, r.err = nil, nil, nil, nil // no references kept while free
	e.mu.Lock()
	if !e.closed && len(e.reqFree) < reqFreeMax {
		e.reqFree = append(e.reqFree, r)
	}
	e.mu.Unlock()
}

// sentReq is the request of an inline send, complete once its slots are
// written: n bytes sent. sentReqs holds one for every size an inline send
// can have, so that a send returns a pointer to a shared one and allocates
// nothing (an integer as an interface value allocates from 256 on).
type sentReq struct{ n int }

var sentReqs = func() *[EagerMax + 1]sentReq {
	var t [EagerMax + 1]sentReq
	for n := range t {
		t[n].n = n
	}
	return &t
}()

// sent returns the completed request of an inline send of n bytes.
func sent(n int) *sentReq { return &sentReqs[n] }

// closedChan is the Done channel of every sent request.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (s *sentReq) Wait(context.Context) (int, error) { return s.n, nil }
func (s *sentReq) Done() <-chan struct{}             { return closedChan }
func (s *sentReq) Cancel()                           {}
func (s *sentReq) Spin(context.Context) bool         { return true }

// failed returns a request that has already failed with err.
func failed(err error) *request {
	r := &request{index: -1, live: -1}
	r.complete(0, err)
	return r
}

// complete ends the request once; later calls are ignored.
func (r *request) complete(n int, err error) {
	if r.state.Swap(stateDone) == stateDone {
		return
	}
	r.n, r.err = n, err
	if err == nil && r.ep != nil {
		r.ep.peers[r.key.peer].count.Count(r.isSend, n)
	}
	r.doneMu.Lock()
	r.finished.Store(true)
	if r.done != nil {
		close(r.done)
	}
	r.doneMu.Unlock()
}

// Wait implements transport.Request.
func (r *request) Wait(ctx context.Context) (int, error) {
	if !r.Spin(ctx) {
		if err := transport.WaitDone(ctx, r.Done()); err != nil {
			return 0, err
		}
	}
	return r.n, r.err
}

// Done implements transport.Request. Its channel is made by the first call
// before the request completes; after, every call returns one closed
// channel.
func (r *request) Done() <-chan struct{} {
	if r.finished.Load() {
		return closedChan
	}
	r.doneMu.Lock()
	defer r.doneMu.Unlock()
	if r.finished.Load() {
		return closedChan
	}
	if r.done == nil {
		r.done = make(chan struct{})
	}
	return r.done
}

// Spin implements transport.Spinner: it polls the rings for up to
// Config.SpinWait.
func (r *request) Spin(ctx context.Context) bool {
	if r.finished.Load() {
		return true
	}
	if r.ep != nil && r.ep.cfg.SpinWait > 0 {
		r.ep.spin(ctx, r.finished.Load, r.ep.cfg.SpinWait)
	}
	return r.finished.Load()
}

// Cancel implements transport.Request.
func (r *request) Cancel() {
	if r.ep != nil {
		r.ep.withdraw(r, transport.ErrCancelled)
	}
}

// Completed implements transport.Completer.
func (r *request) Completed() bool { return r.finished.Load() }

// Tail implements transport.TailReceiver: the length of the message a
// RecvHead took with its head, if it took one.
func (r *request) Tail() (n int, ok bool) { return r.tailN, r.tailOK }

// Completed implements transport.Completer.
func (s *sentReq) Completed() bool { return true }

// SpinAny implements transport.AnySpinner: it polls the rings, as Spin
// does, for up to Config.SpinWait, until one of reqs has completed.
func (e *Endpoint) SpinAny(ctx context.Context, reqs []transport.Request) int {
	if i := transport.CompletedAny(reqs); i >= 0 || e.cfg.SpinWait <= 0 || !e.ownsAny(reqs) {
		return i
	}
	i := -1
	e.spin(ctx, func() bool {
		i = transport.CompletedAny(reqs)
		return i >= 0
	}, e.cfg.SpinWait)
	return i
}

// ownsAny reports whether one of reqs is a pending request of e, or wraps
// one (transport.Unwrap).
func (e *Endpoint) ownsAny(reqs []transport.Request) bool {
	for _, q := range reqs {
		if r, ok := transport.Unwrap(q).(*request); ok && r.ep == e {
			return true
		}
	}
	return false
}
