//go:build linux

package shm

import (
	"context"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// Request states. A receive moves from pending (queued) to copying (a
// goroutine is filling its buffer) to done; a send stays pending until its
// FIN arrives or it is withdrawn. Moves out of pending happen under the
// endpoint's lock.
const (
	statePending int32 = iota
	stateCopying
	stateDone
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
	// endErr, set under the endpoint's lock, is the error a claimed send
	// completes with when its FIN comes: its operation ended meanwhile.
	endErr error

	state atomic.Int32
	done  chan struct{}
	n     int
	err   error
}

var (
	_ transport.Request = (*request)(nil)
	_ transport.Spinner = (*request)(nil)
)

func newRequest(ep *Endpoint, isSend bool, buf []byte, key matchKey) *request {
	return &request{ep: ep, isSend: isSend, buf: buf, key: key, index: -1, done: make(chan struct{})}
}

// sent is the request of an inline send, complete once its slots are
// written: n bytes sent. As an interface value it needs no allocation when
// n is below 256.
type sent int

// closedChan is the Done channel of every sent request.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (s sent) Wait(context.Context) (int, error) { return int(s), nil }
func (s sent) Done() <-chan struct{}             { return closedChan }
func (s sent) Cancel()                           {}
func (s sent) Spin(context.Context) bool         { return true }

// failed returns a request that has already failed with err.
func failed(err error) *request {
	r := &request{index: -1, done: make(chan struct{})}
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
	close(r.done)
}

// Wait implements transport.Request.
func (r *request) Wait(ctx context.Context) (int, error) {
	r.Spin(ctx)
	if err := transport.WaitDone(ctx, r.done); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// Spin implements transport.Spinner: it polls the rings for up to
// Config.SpinWait.
func (r *request) Spin(ctx context.Context) bool {
	if r.ep != nil && r.ep.cfg.SpinWait > 0 {
		r.ep.spin(ctx, r.done)
	}
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Done implements transport.Request.
func (r *request) Done() <-chan struct{} { return r.done }

// Cancel implements transport.Request.
func (r *request) Cancel() {
	if r.ep != nil {
		r.ep.withdraw(r, transport.ErrCancelled)
	}
}
