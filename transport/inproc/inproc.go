// Package inproc implements [transport.Endpoint] for N ranks inside one
// process: for tests, and for single-host jobs that run every rank as a
// goroutine.
//
// A message is copied once, straight from the sender's buffer into the
// receiver's, by whichever side arrives second. Nothing is buffered: a send
// stays pending until its receive is posted (synchronous-send semantics, the
// strictest a transport may have, so an algorithm that runs here cannot rely
// on buffering another transport happens to provide). Memory use is therefore
// bounded by the requests the caller posted; abort records are bounded by
// [AbortMemory] per rank.
package inproc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// AbortMemory is how many aborted operations each rank remembers (per rank,
// oldest forgotten first). Messages for a forgotten aborted operation are no
// longer dropped on arrival, so it must exceed the number of operations that
// can be in flight at once.
const AbortMemory = 4096

// SizeMax is the largest world NewWorld builds.
const SizeMax = 1 << 16

// World is a set of connected in-process endpoints.
type World struct {
	eps []*Endpoint
}

// NewWorld returns a world of size connected endpoints, rank i at index i.
func NewWorld(size int) (*World, error) {
	if size < 1 || size > SizeMax {
		return nil, fmt.Errorf("inproc: world size %d out of range [1, %d]", size, SizeMax)
	}
	w := &World{eps: make([]*Endpoint, size)}
	for r := range w.eps {
		w.eps[r] = &Endpoint{
			world:   w,
			rank:    r,
			recvs:   make(map[matchKey][]*request),
			sends:   make(map[matchKey][]*request),
			aborted: make(map[transport.OpKey]error),
			mine:    make(map[*request]struct{}),
		}
	}
	return w, nil
}

// Endpoints returns the world's endpoints as transport.Endpoints, by rank.
func (w *World) Endpoints() []transport.Endpoint {
	out := make([]transport.Endpoint, len(w.eps))
	for i, e := range w.eps {
		out[i] = e
	}
	return out
}

// Endpoint returns rank r's endpoint.
func (w *World) Endpoint(r int) *Endpoint { return w.eps[r] }

// Close closes every endpoint of the world.
func (w *World) Close() error {
	for _, e := range w.eps {
		_ = e.Close()
	}
	return nil
}

// matchKey is the matching key inside one rank's mailbox.
type matchKey struct {
	src int
	tag transport.Tag
}

// Endpoint is one rank of a [World]. Its mailbox holds the receives it has
// posted and the sends other ranks have posted to it that found no receive.
type Endpoint struct {
	world *World
	rank  int

	mu         sync.Mutex
	closed     bool
	gone       atomic.Bool               // set by Close before it fails the peers' receives from this rank
	recvs      map[matchKey][]*request   // posted receives without a message
	sends      map[matchKey][]*request   // messages without a posted receive
	aborted    map[transport.OpKey]error // ended operations, with their errors
	abortOrder []transport.OpKey         // FIFO of aborted keys, for eviction
	mine       map[*request]struct{}     // this rank's sends waiting in other mailboxes

	onAbort transport.AbortHook // see OnRemoteAbort
}

var (
	_ transport.Endpoint = (*Endpoint)(nil)
	_ transport.Ender    = (*Endpoint)(nil)
)

// Rank is this endpoint's rank.
func (e *Endpoint) Rank() int { return e.rank }

// Size is the number of ranks in the world.
func (e *Endpoint) Size() int { return len(e.world.eps) }

// Send posts buf to peer under tag. The copy into the peer's buffer happens
// when the peer's matching receive is posted.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.Size() {
		return failed(fmt.Errorf("inproc: send to rank %d of %d: %w", peer, e.Size(), transport.ErrBadRank))
	}
	dst := e.world.eps[peer]
	r := newRequest(true, buf, dst, matchKey{e.rank, tag})
	if err := e.register(r); err != nil {
		return failed(err)
	}
	dst.deliver(r)
	return r
}

// register records a send of this rank so Close and Abort can find it.
func (e *Endpoint) register(r *request) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return transport.ErrClosed
	}
	if err := e.abortError(r.key.tag.OpKey); err != nil {
		return err
	}
	e.mine[r] = struct{}{}
	r.owner = e
	return nil
}

func (e *Endpoint) unregister(r *request) {
	e.mu.Lock()
	delete(e.mine, r)
	e.mu.Unlock()
}

// deliver hands the send s (whose home is e) to this mailbox.
func (e *Endpoint) deliver(s *request) {
	e.mu.Lock()
	switch {
	case s.state.Load() != statePending: // withdrawn before it got here
		e.mu.Unlock()
		return
	case e.closed:
		s.complete(0, &transport.PeerError{Rank: e.rank, Err: transport.ErrClosed})
		e.mu.Unlock()
		s.owner.unregister(s)
		return
	case e.abortError(s.key.tag.OpKey) != nil:
		s.complete(len(s.buf), nil) // dropped on arrival, as a network peer would
		e.mu.Unlock()
		s.owner.unregister(s)
		return
	}
	if rs := e.recvs[s.key]; len(rs) > 0 {
		rv := rs[0]
		popFront(e.recvs, s.key)
		rv.state.Store(stateMatched)
		s.state.Store(stateMatched)
		e.mu.Unlock()
		copyMessage(s, rv)
		return
	}
	e.sends[s.key] = append(e.sends[s.key], s)
	e.mu.Unlock()
}

// Recv posts a receive from peer under tag into buf.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.Size() {
		return failed(fmt.Errorf("inproc: receive from rank %d of %d: %w", peer, e.Size(), transport.ErrBadRank))
	}
	k := matchKey{peer, tag}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return failed(transport.ErrClosed)
	}
	if err := e.abortError(tag.OpKey); err != nil {
		e.mu.Unlock()
		return failed(err)
	}
	r := newRequest(false, buf, e, k)
	if ss := e.sends[k]; len(ss) > 0 {
		s := ss[0]
		popFront(e.sends, k)
		s.state.Store(stateMatched)
		r.state.Store(stateMatched)
		e.mu.Unlock()
		copyMessage(s, r)
		return r
	}
	if peer != e.rank && e.world.eps[peer].gone.Load() {
		e.mu.Unlock()
		return failed(&transport.PeerError{Rank: peer, Err: transport.ErrClosed})
	}
	e.recvs[k] = append(e.recvs[k], r)
	e.mu.Unlock()
	return r
}

// copyMessage copies a matched send into its receive and completes both.
func copyMessage(s, r *request) {
	n := len(s.buf)
	if n > len(r.buf) {
		err := fmt.Errorf("inproc: %d-byte message into %d-byte buffer: %w", n, len(r.buf), transport.ErrTruncated)
		s.complete(n, nil)
		r.complete(0, err)
	} else {
		copy(r.buf, s.buf)
		s.complete(n, nil)
		r.complete(n, nil)
	}
	s.owner.unregister(s)
}

func popFront(m map[matchKey][]*request, k matchKey) {
	q := m[k]
	q[0] = nil
	if len(q) == 1 {
		delete(m, k)
	} else {
		m[k] = q[1:]
	}
}

// removeQueued takes r out of this mailbox's queues; it reports whether r
// was there. The caller holds e.mu.
func (e *Endpoint) removeQueued(r *request) bool {
	m := e.recvs
	if r.isSend {
		m = e.sends
	}
	q := m[r.key]
	for i, x := range q {
		if x == r {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(m, r.key)
			} else {
				m[r.key] = q
			}
			return true
		}
	}
	return false
}

// Close fails every pending request of this rank and every send waiting in
// its mailbox. It is idempotent.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	var recvs, sends, mine []*request
	for _, q := range e.recvs {
		recvs = append(recvs, q...)
	}
	for _, q := range e.sends {
		sends = append(sends, q...)
	}
	for r := range e.mine {
		mine = append(mine, r)
	}
	e.recvs, e.sends, e.mine = map[matchKey][]*request{}, map[matchKey][]*request{}, map[*request]struct{}{}

	for _, r := range recvs {
		r.complete(0, transport.ErrClosed)
	}
	for _, s := range sends {
		s.complete(0, &transport.PeerError{Rank: e.rank, Err: transport.ErrClosed})
	}
	e.mu.Unlock()
	for _, s := range sends {
		s.owner.unregister(s)
	}
	for _, s := range mine {
		s.withdraw(transport.ErrClosed)
	}
	e.gone.Store(true)
	for _, d := range e.world.eps {
		if d != e {
			d.peerClosed(e.rank)
		}
	}
	return nil
}

// peerClosed fails the receives this mailbox holds from rank, which has
// closed: its sends are withdrawn, so none of them can complete (Recv
// fails later ones at once, seeing rank's gone).
func (e *Endpoint) peerClosed(rank int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, q := range e.recvs {
		if k.src != rank {
			continue
		}
		delete(e.recvs, k)
		for _, r := range q {
			r.complete(0, &transport.PeerError{Rank: rank, Err: transport.ErrClosed})
		}
	}
}
