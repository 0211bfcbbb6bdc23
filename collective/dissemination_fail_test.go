package collective

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// holdingEndpoint keeps every data send it posts in flight (its request
// completes only when cancelled, as a transport still reading the buffer
// would), and fails every receive from rank failFrom once it has posted a
// data send: a peer that fails in the middle of an operation. (Failing at
// once let a receive posted before the sends fail first, under -race, so
// that the test missed the path it is about in some runs.)
type holdingEndpoint struct {
	transport.Endpoint
	failFrom int
	posted   atomic.Int64 // data sends posted
	held     atomic.Int64 // data sends not yet cancelled
	sentOnce sync.Once
	sent     chan struct{} // closed at the first data send
}

// firstSent is closed once e posted a data send.
func (e *holdingEndpoint) firstSent() chan struct{} {
	e.sentOnce.Do(func() { e.sent = make(chan struct{}) })
	return e.sent
}

var errInjected = errors.New("injected: the peer failed")

func (e *holdingEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	r := e.Endpoint.Send(peer, tag, buf)
	if tag.Seq == 0 {
		return r // a header: its buffer is the operation's, not the scratch
	}
	sent := e.firstSent()
	if e.posted.Add(1) == 1 {
		close(sent)
	}
	e.held.Add(1)
	return &heldSend{inner: r, ep: e, done: make(chan struct{})}
}

func (e *holdingEndpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer == e.failFrom {
		return &heldSend{err: errInjected, done: e.firstSent()}
	}
	return e.Endpoint.Recv(peer, tag, buf)
}

// heldSend is a holdingEndpoint's send: done only once cancelled (or an
// injected failure, done at once).
type heldSend struct {
	inner transport.Request
	ep    *holdingEndpoint
	err   error
	once  sync.Once
	done  chan struct{}
}

func (r *heldSend) Wait(ctx context.Context) (int, error) {
	select {
	case <-r.done:
		if r.err != nil {
			return 0, r.err
		}
		return 0, transport.ErrCancelled
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (r *heldSend) Done() <-chan struct{} { return r.done }

func (r *heldSend) Cancel() {
	if r.inner == nil {
		return
	}
	r.inner.Cancel()
	r.once.Do(func() { r.ep.held.Add(-1); close(r.done) })
}

// TestDisseminationFailureReleasesScratchLast: when a receive fails in the
// middle of a dissemination Scatter or Gather, the sends already posted
// from the operation's scratch are withdrawn (cancelled, which returns
// only when the transport no longer touches the buffer) before the
// operation returns and its scratch goes back to the communicator, where
// the next operation may be lent it. Rank 0's sends never complete by
// themselves here, and its receives from rank failFrom fail: Scatter from
// rank 0 over 8 ranks sends 32 and 16 KiB from its scratch before its last
// round's receive, from rank 7; Gather at 3 ranks sends its second round's
// message from its scratch (its header to rank 1 went in the first round),
// then fails receiving from rank 2. Run it under -race too.
func TestDisseminationFailureReleasesScratchLast(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n, failFrom int
		count       int // int64 elements per rank
		run         func(ctx context.Context, c *Comm, all, mine []int64) error
	}{
		{"scatter", 8, 7, 1024, func(ctx context.Context, c *Comm, all, mine []int64) error {
			return Scatter(ctx, c, all, mine, 0)
		}},
		{"gather", 3, 2, 8, func(ctx context.Context, c *Comm, all, mine []int64) error {
			return Gather(ctx, c, mine, all, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := inproc.NewWorld(tc.n)
			require.NoError(t, err)
			t.Cleanup(func() { _ = w.Close() })
			eps := w.Endpoints()
			hold := &holdingEndpoint{Endpoint: eps[0], failFrom: tc.failFrom}
			eps[0] = hold
			comms := make([]*Comm, tc.n)
			for r, ep := range eps {
				comms[r], err = New(ep, 1, Config{})
				require.NoError(t, err)
			}
			var returnedHeld atomic.Int64
			errs := runAll(tc.n, func(ctx context.Context, r int) error {
				all, mine := make([]int64, tc.n*tc.count), make([]int64, tc.count)
				err := tc.run(ctx, comms[r], all, mine)
				if r == 0 {
					returnedHeld.Store(hold.held.Load())
				}
				return err
			})
			require.ErrorIs(t, errs[0], errInjected, "rank 0") // the others fail or finish: the held sends went through
			require.Positive(t, hold.posted.Load(), "rank 0 sent nothing from its scratch: the test misses the path")
			require.Zero(t, returnedHeld.Load(), "sends from the scratch still in flight when the operation returned")
			require.Equal(t, AlgoDissemination, comms[0].FlightRecord()[len(comms[0].FlightRecord())-1].Algo)
		})
	}
}
