package launcher

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// failureNotes is where ranks leave the reason they aborted an operation,
// so that a peer whose connection to them then breaks (because they exited
// on that error) can say what went wrong first. Without it, when rank 2
// dies and rank 3 exits on the error that causes, rank 0 may see only
// "rank 3 closed the connection": rank 3's abort message, queued just
// before it exited, need not have left.
type failureNotes interface {
	// publish records reason as this rank's latest failure.
	publish(reason error)
	// explain returns the latest failure recorded by rank, if any.
	explain(rank int) (string, bool)
}

// explainedRequest adds to a *transport.PeerError what the failed peer
// said about its own failure: the reason of its latest abort heard here
// (which needs no store, and so works where the store is behind the same
// cut as the peer), or else the note it recorded in the store.
type explainedRequest struct {
	transport.Request
	g *guardedEndpoint // its notes and the aborts heard (toldBy)

	once sync.Once
	err  error // the explained error, once computed
}

// Spin forwards to the transport's request where it can spin (see
// transport.Spinner); elsewhere it reports whether the request is done.
func (r *explainedRequest) Spin(ctx context.Context) bool {
	if s, ok := r.Request.(transport.Spinner); ok {
		return s.Spin(ctx)
	}
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// Completed forwards to the transport's request (transport.Completer): a
// waiter that polls several requests makes no Done channel for it.
func (r *explainedRequest) Completed() bool { return transport.Completed(r.Request) }

// Unwrap returns the transport's request (transport.Unwrapper), by which
// the transport's SpinAny knows it.
func (r *explainedRequest) Unwrap() transport.Request { return r.Request }

// Release hands the transport's request back for reuse (transport.Releaser):
// a shm request is otherwise never reused under the guard, and every
// request costs a new one. The wrapper goes back to its guard, which hands
// it to a later Send or Recv, once the request has completed (by Release's
// contract nobody refers to it any more); one not completed is left to the
// collector.
func (r *explainedRequest) Release() {
	select {
	case <-r.Request.Done():
	default:
		return
	}
	transport.Release(r.Request)
	g := r.g
	r.Request, r.once, r.err = nil, sync.Once{}, nil
	g.pushFree(r)
}

func (r *explainedRequest) Wait(ctx context.Context) (int, error) {
	n, err := r.Request.Wait(ctx)
	if err == nil || ctx.Err() != nil {
		return n, err // (pe below escapes: declared here, it cost an allocation per Wait)
	}
	var pe *transport.PeerError
	if !errors.As(err, &pe) {
		return n, err
	}
	r.once.Do(func() {
		r.err = err
		why, ok := r.g.toldBy(pe.Rank)
		if !ok && !errors.Is(pe.Err, metaroce.ErrPeerTimeout) {
			// (A peer that stopped answering on every path, MetaRoCE's
			// peer timeout, left no note worth a store read, and the
			// store is likely behind the same cut: the read would only
			// add noteTimeout.)
			why, ok = r.g.notes.explain(pe.Rank)
		}
		if ok {
			r.err = &transport.PeerError{Rank: pe.Rank, Err: fmt.Errorf("%w (rank %d had failed: %s)", pe.Err, pe.Rank, why)}
		}
	})
	return n, r.err
}

// doneRequest is a request that failed when it was posted.
type doneRequest struct {
	err  error
	done chan struct{}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func failedRequest(err error) transport.Request { return &doneRequest{err: err, done: closedChan} }

func (r *doneRequest) Wait(context.Context) (int, error) { return 0, r.err }
func (r *doneRequest) Done() <-chan struct{}             { return r.done }
func (r *doneRequest) Cancel()                           {}
func (r *doneRequest) Completed() bool                   { return true }
