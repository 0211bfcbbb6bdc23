package tcp

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// request is the transport.Request of a send or receive.
//
// I/O goroutines that move bytes into or out of buf bracket it with begin
// and end; while any is between them the request is busy, and Cancel (or a
// failure) waits for, or is deferred until, the end of that I/O. So once a
// request has completed, no goroutine touches its buffer.
type request struct {
	ep     *Endpoint
	isSend bool
	peer   int
	tag    transport.Tag
	buf    []byte
	msgID  uint64 // a remote send's message number
	// done is made by the first Done before completion (most sends are
	// complete by then: written at once, they need none) and closed at
	// completion; fin is set then, under mu, readable without it.
	done chan struct{}
	fin  atomic.Bool

	mu        sync.Mutex
	idle      sync.Cond // signalled when busy drops to 0
	busy      int       // I/O goroutines between begin and end
	stopping  error     // failure requested while busy
	remaining int       // bytes still to move before the request completes
	size      int       // the result on success
	finished  bool
	n         int
	err       error
	// noReuse marks a rendezvous request, which the endpoint's maps may
	// still name after it completed; released is set by Release.
	noReuse, released bool
}

var (
	_ transport.Request  = (*request)(nil)
	_ transport.Releaser = (*request)(nil)
)

// reqFreeMax is how many released requests an endpoint keeps for reuse.
const reqFreeMax = 256

// newRequest returns a pending request: one released to ep (Release) if it
// keeps any, else a new one.
func newRequest(ep *Endpoint, isSend bool, peer int, tag transport.Tag, buf []byte) *request {
	if r := ep.reusedRequest(); r != nil {
		r.mu.Lock() // an I/O goroutine may still be leaving end
		r.isSend, r.peer, r.tag, r.buf, r.msgID, r.done = isSend, peer, tag, buf, 0, nil
		r.busy, r.stopping, r.remaining, r.size, r.finished, r.n, r.err = 0, nil, 0, 0, false, 0, nil
		r.noReuse, r.released = false, false
		r.fin.Store(false)
		r.mu.Unlock()
		return r
	}
	r := &request{ep: ep, isSend: isSend, peer: peer, tag: tag, buf: buf}
	r.idle.L = &r.mu
	return r
}

// reusedRequest returns a request released to e, or nil.
func (e *Endpoint) reusedRequest() *request {
	if e == nil {
		return nil
	}
	e.reqMu.Lock()
	defer e.reqMu.Unlock()
	n := len(e.reqFree)
	if n == 0 {
		return nil
	}
	r := e.reqFree[n-1]
	e.reqFree[n-1] = nil
	e.reqFree = e.reqFree[:n-1]
	return r
}

// Release implements transport.Releaser: a request that completed
// successfully and that no map of the endpoint can still name (an eager
// message or a send to this rank itself; not a rendezvous one) goes back
// to its endpoint for a later Send or Recv. The I/O goroutine that
// completed it leaves it under its lock, which newRequest takes before
// reusing it. Other requests are left to the garbage collector.
func (r *request) Release() {
	e := r.ep
	if e == nil {
		return
	}
	r.mu.Lock()
	// A receive Cancel failed is unhooked like a completed one (every
	// path that hands out a posted receive holds e.mu, as unhook does),
	// so it is reused too: a collective's eager call cancels, every call,
	// the early receives its header made unneeded. A cancelled send is
	// not: its data frame may still wait in the connection's queue naming
	// it, and a reused request would have the old frame written with its
	// new buffer.
	cancelledRecv := r.err == transport.ErrCancelled && !r.isSend
	ok := r.finished && (r.err == nil || cancelledRecv) && !r.noReuse && !r.released
	if ok {
		r.released, r.buf = true, nil
	}
	r.mu.Unlock()
	if !ok {
		return
	}
	e.reqMu.Lock()
	if len(e.reqFree) < reqFreeMax {
		e.reqFree = append(e.reqFree, r)
	}
	e.reqMu.Unlock()
}

// failedRequest returns a request that has already failed with err.
func failedRequest(err error) *request {
	r := newRequest(nil, false, -1, transport.Tag{}, nil)
	r.finished, r.err = true, err
	r.fin.Store(true)
	return r
}

// Wait implements transport.Request.
func (r *request) Wait(ctx context.Context) (int, error) {
	if !r.fin.Load() {
		if err := transport.WaitDone(ctx, r.Done()); err != nil {
			return 0, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, r.err
}

// Done implements transport.Request.
func (r *request) Done() <-chan struct{} {
	if r.fin.Load() {
		return closedChan
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return closedChan
	}
	if r.done == nil {
		r.done = make(chan struct{})
	}
	return r.done
}

// closedChan is the Done channel of every request that completed before
// its first Done.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Cancel implements transport.Request. It unhooks the request from the
// endpoint, then waits for I/O in progress on its buffer (at most one eager
// message or one rendezvous chunk) before failing it with ErrCancelled.
func (r *request) Cancel() {
	if r.isDone() {
		return
	}
	if r.ep != nil {
		r.ep.unhook(r)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	if r.stopping == nil {
		r.stopping = transport.ErrCancelled
	}
	for r.busy > 0 {
		r.idle.Wait()
	}
	if !r.finished {
		r.finishLocked(0, r.stopping)
	}
}

func (r *request) isDone() bool { return r.fin.Load() }

// begin marks the start of I/O on r's buffer. It returns false if r has
// completed or is being cancelled or failed; then the caller must not touch
// the buffer.
func (r *request) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished || r.stopping != nil {
		return false
	}
	r.busy++
	return true
}

// end marks the end of I/O on r's buffer that moved moved bytes, or that
// failed if !ok. The request completes with its size once no bytes remain,
// or, when idle, with a failure requested meanwhile. A failed I/O never
// completes r by itself: the failure of the peer or endpoint does.
func (r *request) end(moved int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy--
	if ok {
		r.remaining -= moved
	}
	switch {
	case r.finished:
	case ok && r.remaining <= 0 && r.busy == 0:
		r.finishLocked(r.size, nil)
	case r.busy == 0 && r.stopping != nil:
		r.finishLocked(0, r.stopping)
	}
	if r.busy == 0 {
		r.idle.Broadcast()
	}
}

// expect sets the number of bytes to move and the result on success.
func (r *request) expect(size int) {
	r.mu.Lock()
	r.remaining, r.size = size, size
	r.mu.Unlock()
}

// fail completes r with err, or, if I/O on its buffer is in progress,
// when that I/O ends. It never blocks on I/O.
func (r *request) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	if r.busy > 0 {
		if r.stopping == nil {
			r.stopping = err
		}
		return
	}
	r.finishLocked(0, err)
}

// complete completes r with (n, err) unless it has already completed. The
// caller must not be between begin and end.
func (r *request) complete(n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.finished {
		r.finishLocked(n, err)
	}
}

func (r *request) finishLocked(n int, err error) {
	r.finished, r.n, r.err = true, n, err
	if r.ep != nil && err == nil {
		r.ep.peers[r.peer].count.Count(r.isSend, n) // before done: a waiter sees it counted
	}
	r.fin.Store(true)
	if r.done != nil {
		close(r.done)
	}
	if r.ep != nil {
		r.ep.forget(r)
	}
}
