package inproc

import (
	"context"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// Request states. A request moves from pending to matched (its partner is
// found and the copy is under way) or straight to done (failed, cancelled,
// dropped); from matched only the copier moves it to done. Every move out of
// pending happens under the lock of the request's home mailbox, so a pending
// request found in a queue can be trusted to still be pending.
const (
	statePending int32 = iota
	stateMatched
	stateDone
)

// request is the transport.Request of inproc. Its home is the mailbox where
// it is matched: the receiver's for both a send and a receive.
type request struct {
	isSend bool
	buf    []byte
	home   *Endpoint // mailbox where it is matched; nil for a failed request
	owner  *Endpoint // for a send: the sending rank
	key    matchKey

	state atomic.Int32
	done  chan struct{}
	n     int   // valid after done is closed
	err   error // valid after done is closed
}

var _ transport.Request = (*request)(nil)

func newRequest(isSend bool, buf []byte, home *Endpoint, key matchKey) *request {
	return &request{isSend: isSend, buf: buf, home: home, key: key, done: make(chan struct{})}
}

// failed returns a request that has already failed with err.
func failed(err error) *request {
	r := &request{done: make(chan struct{})}
	r.complete(0, err)
	return r
}

// complete ends the request. The caller owns the move to done: either it
// holds the home lock and the request is pending, or it is the copier of a
// matched request.
func (r *request) complete(n int, err error) {
	r.n, r.err = n, err
	r.state.Store(stateDone)
	close(r.done)
}

// Wait implements transport.Request.
func (r *request) Wait(ctx context.Context) (int, error) {
	if err := transport.WaitDone(ctx, r.done); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// Done implements transport.Request.
func (r *request) Done() <-chan struct{} { return r.done }

// Cancel implements transport.Request.
func (r *request) Cancel() { r.withdraw(transport.ErrCancelled) }

// withdraw fails r with err if it is still pending; if its copy is under
// way it waits for the copy to end. Afterwards the buffer is not touched.
func (r *request) withdraw(err error) {
	if r.home == nil {
		return
	}
	h := r.home
	h.mu.Lock()
	switch r.state.Load() {
	case statePending:
		h.removeQueued(r)
		r.complete(0, err)
		h.mu.Unlock()
		if r.isSend {
			r.owner.unregister(r)
		}
		return
	case stateMatched:
		h.mu.Unlock()
		<-r.done
		return
	}
	h.mu.Unlock()
}
