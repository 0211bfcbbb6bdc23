package mrtransport

import (
	"context"

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

	done chan struct{}
	n    int   // valid after done is closed
	err  error // valid after done is closed
}

var _ transport.Request = (*request)(nil)

func newRequest(ep *Endpoint, isSend bool, peer int, tag transport.Tag, buf []byte) *request {
	return &request{ep: ep, isSend: isSend, peer: peer, tag: tag, key: dataKey(tag), buf: buf,
		smallRecv: !isSend && len(buf) <= smallSpinBytes, done: make(chan struct{})}
}

// failed returns a request that has already failed with err.
func failed(err error) *request {
	r := &request{done: make(chan struct{}), state: stateDone, err: err}
	close(r.done)
	return r
}

// complete ends r. The caller holds the engine's lock.
func (r *request) complete(n int, err error) {
	if r.state == stateDone {
		return
	}
	r.state = stateDone
	if r.released {
		r.ep.eagerHeld -= len(r.buf)
		if r.pooled {
			r.ep.eagerFree.put(r.buf) // the core is done with the copy
		}
		r.buf = nil
		return // the caller saw it complete already
	}
	r.n, r.err, r.buf = n, err, nil
	close(r.done)
}

// release completes an eager send for its caller, whose buffer the
// transport no longer needs: buf is the transport's copy of it, from
// Endpoint.eagerFree if pooled (an empty send is not copied). The caller
// holds the engine's lock.
func (r *request) release(copied []byte, pooled bool) {
	r.released, r.pooled, r.n, r.buf = true, pooled, len(copied), copied
	r.ep.eagerHeld += len(copied)
	close(r.done)
}

// Wait implements transport.Request. It spins first (see Spin).
func (r *request) Wait(ctx context.Context) (int, error) {
	if r.Spin(ctx) {
		return r.n, r.err
	}
	if err := transport.WaitDone(ctx, r.done); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// Done implements transport.Request.
func (r *request) Done() <-chan struct{} { return r.done }

// Cancel implements transport.Request: it withdraws r from the core or
// from its queue. When it returns, the core no longer touches r's buffer.
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
