// Package transport defines the point-to-point interface that every gocoll
// collective algorithm is written against, and nothing else.
//
// An [Endpoint] is one rank's view of a world of Size ranks. It moves opaque
// byte messages to and from peer ranks without blocking: [Endpoint.Send] and
// [Endpoint.Recv] post an operation and return a [Request] at once; the
// caller waits for it with [Request.Wait], which takes a context.Context so
// that every wait has a deadline.
//
// Matching. A message is matched to a receive by (source rank, [Tag]).
// Messages with the same (source, destination, tag) are matched in the order
// they were sent and posted. Messages with different tags are independent:
// neither waits for the other.
//
// Buffers. A receive writes straight into the caller's buffer; no copy is
// kept. The buffer of a posted send or receive belongs to the transport until
// its Request completes or is cancelled, and the caller must neither read nor
// write it in that time. A message longer than the receive buffer fails that
// receive with an error wrapping [ErrTruncated]; a shorter one completes it
// with the number of bytes received.
//
// Aborts. [Endpoint.Abort] ends one operation (all tags with the same
// [OpKey]) on this rank and on the given peers. On each peer, every pending
// and future request of that operation, to or from any rank, fails with a
// [*RemoteAbortError], and the operation's messages that arrive later are
// dropped. An operation is one collective call shared by all its ranks, so
// once one rank gives up on it (a mismatch, a cancelled context), no rank
// may go on waiting for it: not for a receive, and not for a send to a third
// rank that will never come.
//
// Statistics. An endpoint that counts its traffic implements
// [StatsReporter]; [StatsOf] returns a snapshot ([Stats]): per peer the
// transport, messages and bytes each way, and on MetaRoCE each path's
// bytes, share, resends, RTT, window and state.
//
// Implementations: [github.com/gocoll/gocoll/transport/inproc] (N ranks in one
// process) and, over the network, MetaRoCE and TCP.
package transport

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// OpKey names one collective or point-to-point operation: the communicator it
// belongs to and its sequence number there. All messages of one operation
// share an OpKey, so an abort covers them all.
type OpKey struct {
	Comm uint64 // communicator id, equal on every member
	Op   uint64 // operation sequence number within the communicator
}

// Tag is the matching key of one message: its operation and the message's
// index within that operation for one ordered pair of ranks.
type Tag struct {
	OpKey
	Seq uint32 // message index within the operation for this (src, dst) pair
}

func (t Tag) String() string {
	return fmt.Sprintf("comm=%#x op=%d seq=%d", t.Comm, t.Op, t.Seq)
}

// Request is the completion handle of a posted send or receive.
type Request interface {
	// Wait blocks until the operation completes, fails, or ctx is done. It
	// returns the number of bytes sent or received. If ctx ends first, Wait
	// returns ctx's error and the operation stays posted: call Cancel to take
	// the buffer back. Wait may be called again after it returned ctx's error.
	Wait(ctx context.Context) (int, error)
	// Done returns a channel closed when the operation has completed or failed.
	Done() <-chan struct{}
	// Cancel withdraws the operation if it has not completed. When Cancel
	// returns, the transport no longer touches the buffer. A cancelled
	// request fails with ErrCancelled. Cancel after completion is a no-op.
	Cancel()
}

// Releaser is implemented by the requests of a transport that reuses them.
// Release hands back a request its caller is done with: the request has
// completed (Done is closed, or Wait returned its result), and neither the
// caller nor anyone it gave the value to will use it again, for any method.
// The transport may then return the same request from a later Send or
// Recv. A request that has not completed is left alone (not reused).
// Releasing is optional: a request never released is garbage collected.
type Releaser interface {
	Release()
}

// Release calls r's Release, if r is a Releaser; see Releaser for when a
// caller may.
func Release(r Request) {
	if rl, ok := r.(Releaser); ok {
		rl.Release()
	}
}

// Spinner is implemented by the requests of a transport that can make
// progress in the goroutine that waits (shared memory): Spin polls for the
// request's completion, yielding the processor between polls, until it
// completes, ctx ends or the transport's spin budget is spent, and reports
// whether it completed. A waiter that selects on Done calls Spin first;
// Wait spins by itself.
type Spinner interface {
	Spin(ctx context.Context) bool
}

// HeadSender is implemented by endpoints that can move a small message in
// the same transfer as a larger one to the same peer (shared memory: in
// the slot that announces the larger one's rendezvous). SendWithHead is
// Send(peer, headTag, head) followed by Send(peer, tag, buf), with the
// same results, matching and order; it returns the two requests. Where
// the pair does not qualify (see the transport) it sends them apart.
type HeadSender interface {
	SendWithHead(peer int, headTag Tag, head []byte, tag Tag, buf []byte) (headReq, req Request)
}

// SendWithHead sends head and then buf to peer through ep's SendWithHead
// if ep is a HeadSender, else as two Sends.
func SendWithHead(ep Endpoint, peer int, headTag Tag, head []byte, tag Tag, buf []byte) (headReq, req Request) {
	if hs, ok := ep.(HeadSender); ok {
		return hs.SendWithHead(peer, headTag, head, tag, buf)
	}
	return ep.Send(peer, headTag, head), ep.Send(peer, tag, buf)
}

// HeadReceiver is implemented by endpoints whose receives can take a
// message and the one sent with it (HeadSender) in one request. RecvHead
// posts the receive of the message headTag into head, as Recv does, and
// returns its request, which completes when that message has come. If
// the message tag (of the same operation) came in the same transfer and
// fits buf, the request has received it into buf too before it completes,
// and Tail (TailReceiver) reports its length; else that message is left
// for a later Recv of tag. RecvHead returns nil and posts nothing where no
// message of len(buf) bytes travels with a head (then post two Recvs).
type HeadReceiver interface {
	RecvHead(peer int, headTag Tag, head []byte, tag Tag, buf []byte) Request
}

// TailReceiver is implemented by the requests of RecvHead (HeadReceiver),
// or wraps one (Unwrap). Once the request has completed without error,
// Tail reports whether it received the message sent with the head, and
// its length.
type TailReceiver interface {
	Tail() (n int, ok bool)
}

// TailOf is r's Tail (TailReceiver), seen through wrappers (Unwrap); false
// for a request that received no tail or cannot.
func TailOf(r Request) (n int, ok bool) {
	if t, is := Unwrap(r).(TailReceiver); is {
		return t.Tail()
	}
	return 0, false
}

// AnyWaiter is implemented by endpoints whose waits must go through the
// transport, as a simulated fabric's, whose clock moves only while every
// rank waits (transport/simnet): WaitAny blocks until one of reqs has
// completed, ctx is done or wake is ready (a tick of the caller's timer, by
// which it bounds the wait; nil: no tick), and returns the index of a
// completed one, or -1 once ctx is done or wake was received from. A
// request of another endpoint counts as completed. Without it, a waiter
// polls (AnySpinner) and then selects on the requests' Done channels.
type AnyWaiter interface {
	WaitAny(ctx context.Context, reqs []Request, wake <-chan time.Time) int
}

// AnySpinner is implemented by endpoints whose requests are Spinners, for a
// waiter on the first of several requests: SpinAny polls in the calling
// goroutine, as the requests' Spin does, until one of reqs has completed,
// ctx ends or the endpoint's spin budget is spent, and returns the index of
// a completed one, or -1. It polls only for this endpoint's own requests
// (seen through the wrappers of an endpoint that wraps it: Unwrap) and
// returns -1 at once if none of them is pending; the others (of another
// transport joined in a route) are only checked, through Completed. It
// allocates nothing. The caller then blocks on the requests' Done
// channels, with its own deadline.
type AnySpinner interface {
	SpinAny(ctx context.Context, reqs []Request) int
}

// JointSpinner is implemented by an AnySpinner whose spin can poll the
// other transports joined with it in a route (transport/route installs
// them with SetSpinAlso). A spin on one transport's requests holds the
// processor while it yields: at GOMAXPROCS 1 the Go scheduler hands it back
// to the spinning goroutine without polling the network (runtime.Gosched
// puts it on the global run queue, which is served before the poller), so
// another transport's datagrams, and the completions and acknowledgements
// they carry, wait unread until the spin's budget has run out.
type JointSpinner interface {
	AnySpinner
	// SpinStep polls once, as one round of the endpoint's spin does:
	// it handles whatever has arrived, without waiting and without
	// yielding, and returns at once where another goroutine polls.
	SpinStep()
	// SetSpinAlso makes every round of the endpoint's spinning waits
	// (Spin, SpinAny) call also after its own poll; nil removes it. Call
	// it before any request is made.
	SetSpinAlso(also func())
}

// Unwrapper is implemented by a request that wraps a transport's, as those
// of an endpoint that wraps the transport's endpoint (the launcher's
// health guard): Unwrap returns the wrapped request, so that the
// transport's SpinAny, handed the wrappers by the outer endpoint's, knows
// its own requests. Such a wrapper should forward Completed (Completer)
// too: without it, every poll of it makes the wrapped request's Done
// channel.
type Unwrapper interface {
	Unwrap() Request
}

// Unwrap returns the request r wraps, through every Unwrapper, or r itself
// where it wraps none.
func Unwrap(r Request) Request {
	for {
		u, ok := r.(Unwrapper)
		if !ok {
			return r
		}
		r = u.Unwrap()
	}
}

// Completer is implemented by requests that tell whether they have
// completed without making a Done channel (which a transport makes only
// for a request somebody sleeps on).
type Completer interface {
	Completed() bool
}

// Completed reports whether r has completed, without waiting: through
// Completer if r is one, else through its Done channel.
func Completed(r Request) bool {
	if c, ok := r.(Completer); ok {
		return c.Completed()
	}
	select {
	case <-r.Done():
		return true
	default:
		return false
	}
}

// CompletedAny returns the index of the first of reqs that has completed
// (Completed), or -1.
func CompletedAny(reqs []Request) int {
	for i, r := range reqs {
		if Completed(r) {
			return i
		}
	}
	return -1
}

// Ender is implemented by endpoints that a composite endpoint (one that
// reaches different peers through different transports) can join: a peer
// that aborts an operation tells only the transport it reaches this rank
// through, and the composite must end the operation on the others too.
type Ender interface {
	// End ends op on this rank alone, as Abort does but telling no peer:
	// its pending and later requests fail with err (an operation already
	// ended keeps its first error).
	End(op OpKey, err error)
	// OnRemoteAbort registers f (nil: none), called with every
	// *RemoteAbortError by which a peer ended an operation on this rank,
	// after the operation has ended here. f may be called from the
	// endpoint's internal goroutines and with its locks held: it must not
	// block, nor call this endpoint.
	OnRemoteAbort(f func(*RemoteAbortError))
}

// AbortHook holds the function an Ender's OnRemoteAbort registers; the
// zero value holds none. It is safe for concurrent use.
type AbortHook struct {
	f atomic.Pointer[func(*RemoteAbortError)]
}

// Set registers f (nil: none).
func (h *AbortHook) Set(f func(*RemoteAbortError)) {
	if f == nil {
		h.f.Store(nil)
		return
	}
	h.f.Store(&f)
}

// Call calls the registered function, if any, with err.
func (h *AbortHook) Call(err *RemoteAbortError) {
	if f := h.f.Load(); f != nil {
		(*f)(err)
	}
}

// Traits describe how a transport moves data, for the collectives' choice
// of algorithm. The zero value describes a network.
type Traits struct {
	// SharedMemory: every peer is on this host and a receiver copies a
	// message straight from the sender's memory when it matches it. A
	// message posted to many peers at once costs nothing until they
	// receive it, so algorithms that talk to every rank at once pay no
	// queueing for it.
	SharedMemory bool
	// ChunkBytes is the message size this transport prefers collectives to
	// pipeline in: from about this size on, what it pays per message (its
	// start, acknowledgement and completion) no longer shows. Algorithms
	// that cut buffers into chunks use it when their configuration leaves
	// the chunk size unset. 0: no preference. Every rank of a world sees
	// the same value on the same kind of transport (collective headers
	// check that the ranks' chunk sizes agree).
	ChunkBytes int
}

// TraitsOf returns ep's traits: what its Traits method reports, or the zero
// Traits if it has none. Wrappers of an endpoint forward Traits.
func TraitsOf(ep Endpoint) Traits {
	if t, ok := ep.(interface{ Traits() Traits }); ok {
		return t.Traits()
	}
	return Traits{}
}

// Endpoint is one rank's point-to-point interface to a world of ranks.
// All methods are safe for concurrent use.
type Endpoint interface {
	// Rank is this endpoint's rank in [0, Size).
	Rank() int
	// Size is the number of ranks in the world.
	Size() int
	// Send posts the message buf to rank peer under tag. It never blocks.
	// A send to one's own rank is allowed and matches a Recv from oneself.
	Send(peer int, tag Tag, buf []byte) Request
	// Recv posts a receive of one message from rank peer under tag into buf.
	// It never blocks.
	Recv(peer int, tag Tag, buf []byte) Request
	// Abort ends operation op on this rank: its pending and later requests
	// for op fail with an error wrapping reason, and messages that arrive
	// for op are dropped. Each rank in peers is told, and ends op the same
	// way, its requests failing with a *RemoteAbortError carrying reason's
	// text (a peer that already ended op keeps its first error). Abort does
	// not wait for the peers; the state it keeps is bounded.
	Abort(op OpKey, peers []int, reason error)
	// Close releases the endpoint. Pending receives fail with ErrClosed. A
	// pending send fails with ErrClosed or completes without error, and it
	// completes without error only if its message was delivered: the peer
	// still receives it after the close. A transport may let sends already
	// under way finish first, waiting a bounded time (its linger). A send
	// that completed before Close (an eager one, whose bytes the transport
	// holds) is delivered too, unless the peer takes nothing for that whole
	// linger (it is gone or stuck). Every later call fails with ErrClosed.
	Close() error
}

// Errors common to every transport. Test with errors.Is.
var (
	ErrClosed    = errors.New("transport: endpoint closed")
	ErrCancelled = errors.New("transport: request cancelled")
	ErrTruncated = errors.New("transport: message longer than receive buffer")
	ErrBadRank   = errors.New("transport: rank out of range")
)

// RemoteAbortError is the error of a receive whose operation a peer aborted.
type RemoteAbortError struct {
	Rank   int    // the rank that aborted
	Op     OpKey  // the operation it aborted
	Reason string // the text of its reason
}

func (e *RemoteAbortError) Error() string {
	return fmt.Sprintf("rank %d aborted the operation: %s", e.Rank, e.Reason)
}

// PeerError reports that a peer rank failed or became unreachable.
type PeerError struct {
	Rank int
	Err  error
}

func (e *PeerError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }
func (e *PeerError) Unwrap() error { return e.Err }

// WaitDone blocks until done is closed or ctx ends, and returns nil or ctx's
// error. When both have happened it returns nil: a completed operation is
// reported as completed. Transports build Request.Wait on it.
func WaitDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
