package mrtransport

import (
	"context"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// Request states. Every move happens under the engine's lock.
const (
	stateQueued uint8 = iota // behind another message with the same key, or waiting to be posted
	stateInCore              // handed to the core (or, to oneself, waiting in the self mailbox)
	stateDone                // completed, failed or cancelled
)

// request is the transport.Request of this package.
type request struct {
	ep     *Endpoint
	isSend bool
	sink   bool // an internal receive that discards a message of an ended operation
	peer   int
	tag    transport.Tag
	key    msgKey
	buf    []byte
	state  uint8
	// released is set on an eager send completed for its caller ahead of
	// the core: buf is then the transport's copy, and r stays at the head
	// of its queue until the core reports the send done.
	released bool
	pooled   bool // released with a copy from Endpoint.eagerFree, to go back there
	// smallRecv is set at creation, for Spin (which runs without the
	// engine's lock, while complete clears buf): a receive of at most
	// smallSpinBytes.
	smallRecv bool
	// spunOut is when (the engine's time, in ns) a waiter last gave up
	// spinning on the request, 0 if none did; spinSpare how much longer
	// (ns) a spin of the whole budget would have lasted. Set by Spin and
	// SpinAny (gaveUp), read by finish (learn, spinwait.Gauge).
	spunOut   atomic.Int64
	spinSpare atomic.Int64

	// fin is set when the caller's request completes (at stateDone, or
	// at release for an eager send); done is made by the first Done
	// before that (a request that completed first needs none: most do,
	// through Spin) and closed then. Both under the engine's lock; fin
	// is also read without it.
	done chan struct{}
	fin  atomic.Bool
	n    int   // valid once fin is set
	err  error // valid once fin is set
	// freed is set by Release; the request is kept for reuse once it is
	// also done in the engine (an eager send's request stays the head of
	// its queue until the core is done with it). noReuse marks a request
	// to this rank itself, which the self mailbox handles.
	freed, noReuse bool
	// holds counts the paths of batches being written whose datagrams
	// still to be written read the buffer of this send, done in the
	// engine (stateDone): its end waits for them (heldwrite.go). Under
	// the engine's lock.
	holds int
}

var (
	_ transport.Request  = (*request)(nil)
	_ transport.Releaser = (*request)(nil)
)

// reqFreeMax is how many released requests an endpoint keeps for reuse.
const reqFreeMax = 256

// newRequest returns a queued request: one released to ep (Release) if it
// keeps any, else a new one. The caller holds the engine's lock.
func newRequest(ep *Endpoint, isSend bool, peer int, tag transport.Tag, buf []byte) *request {
	var r *request
	if n := len(ep.reqFree); n > 0 {
		r = ep.reqFree[n-1]
		ep.reqFree[n-1] = nil
		ep.reqFree = ep.reqFree[:n-1]
		*r = request{} // nothing else refers to it (see Release)
	} else {
		r = &request{}
	}
	r.ep, r.isSend, r.peer, r.tag, r.key, r.buf = ep, isSend, peer, tag, dataKey(tag), buf
	r.smallRecv = !isSend && len(buf) <= smallSpinBytes
	r.noReuse = peer == ep.cfg.Rank
	return r
}

// failed returns a request that has already failed with err.
func failed(err error) *request {
	r := &request{state: stateDone, err: err}
	r.fin.Store(true)
	return r
}

// finish makes the caller's request complete: Done's channel, if any,
// closes. The caller holds the engine's lock.
func (r *request) finish() {
	r.fin.Store(true)
	if r.done != nil {
		close(r.done)
	}
	if r.ep != nil {
		r.learn(r.ep.eng.last)
	}
}

// Release implements transport.Releaser: a request its caller is done
// with goes back to its endpoint, for a later Send or Recv, once the
// engine is done with it too; one that has not completed, or that was
// released already, is left alone.
func (r *request) Release() {
	e := r.ep
	if e == nil || r.sink || r.noReuse || !r.fin.Load() {
		return
	}
	e.eng.lockAPI()
	defer e.eng.mu.Unlock()
	if r.freed {
		return
	}
	r.freed = true
	if r.state == stateDone && r.holds == 0 {
		e.keepRequest(r)
	}
}

// keepRequest keeps r, done for its caller and the engine, for reuse. The
// caller holds the engine's lock.
func (e *Endpoint) keepRequest(r *request) {
	if !e.closed && len(e.reqFree) < reqFreeMax {
		e.reqFree = append(e.reqFree, r)
	}
}

// complete ends r in the engine with n and err, and for its caller too
// unless a batch being written still reads its buffer: then the last of
// those writes ends it (heldwrite.go). The caller holds the engine's
// lock.
func (r *request) complete(n int, err error) {
	if r.state == stateDone {
		return
	}
	inCore := r.state == stateInCore
	r.state = stateDone
	if r.released {
		// The peer has the message (or it is withdrawn): it no longer
		// counts against EagerBuffer, even while a write reads the copy.
		r.ep.eagerHeld -= len(r.buf)
	} else {
		r.n, r.err = n, err
	}
	if inCore && r.isSend && r.ep.eng.hold(r, r.buf) {
		return
	}
	r.end()
}

// end ends r, done in the engine, for its caller: it completes, or an
// eager send's copy goes back to the pool. The caller holds the engine's
// lock.
func (r *request) end() {
	if r.released {
		if r.pooled {
			r.ep.eagerFree.put(r.buf) // the core is done with the copy
		}
		r.buf = nil
		if r.freed {
			r.ep.keepRequest(r) // released by its caller meanwhile
		}
		return // the caller saw it complete already
	}
	r.buf = nil
	r.finish()
}

// release completes an eager send for its caller, whose buffer the
// transport no longer needs: buf is the transport's copy of it, from
// Endpoint.eagerFree if pooled (an empty send is not copied). The caller
// holds the engine's lock.
func (r *request) release(copied []byte, pooled bool) {
	r.released, r.pooled, r.n, r.buf = true, pooled, len(copied), copied
	r.ep.eagerHeld += len(copied)
	r.finish()
}

// Wait implements transport.Request. It spins first (see Spin).
func (r *request) Wait(ctx context.Context) (int, error) {
	if r.Spin(ctx) {
		return r.n, r.err
	}
	if err := transport.WaitDone(ctx, r.Done()); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// Done implements transport.Request.
func (r *request) Done() <-chan struct{} {
	if r.fin.Load() || r.ep == nil {
		return closedChan
	}
	r.ep.eng.lock()
	defer r.ep.eng.mu.Unlock()
	if r.fin.Load() {
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

// Cancel implements transport.Request: it withdraws r from the core or
// from its queue. When it returns, the transport no longer touches r's
// buffer: a write of a datagram whose payload it gathered from a send's
// buffer (full pieces at MTU 9000) that had begun is over, however the
// send ended (cancelled here, or completed or failed just before).
func (r *request) Cancel() {
	if r.ep == nil {
		return
	}
	r.ep.cancel(r)
}

// queue is the FIFO of one connection's requests in one direction with one
// key. Only its head is ever in the core.
type queue struct {
	reqs []*request
	// draining marks a send queue that Close lets go (withdrawPending).
	draining bool
}

func (q *queue) head() *request {
	if len(q.reqs) == 0 {
		return nil
	}
	return q.reqs[0]
}

func (q *queue) popHead() {
	q.reqs[0] = nil
	q.reqs = q.reqs[1:]
	if len(q.reqs) == 0 {
		q.reqs = nil
	}
}

// remove takes r out of the queue; it reports whether r was there.
func (q *queue) remove(r *request) bool {
	for i, x := range q.reqs {
		if x == r {
			copy(q.reqs[i:], q.reqs[i+1:])
			q.reqs[len(q.reqs)-1] = nil
			q.reqs = q.reqs[:len(q.reqs)-1]
			return true
		}
	}
	return false
}
