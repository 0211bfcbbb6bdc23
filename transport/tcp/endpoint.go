package tcp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// Endpoint is one rank's [transport.Endpoint] over TCP, built by
// [Listener.Connect] or [NewLocalWorld]. All methods are safe for concurrent
// use. Close releases its sockets and goroutines.
type Endpoint struct {
	cfg        Config
	rank, size int
	peers      []*peer // index = rank; peers[rank] is this rank itself (no conns)
	wg         sync.WaitGroup

	mu     sync.Mutex // guards closed, ended and every peer's state
	closed bool
	ended  abortLog[error] // operations ended here (aborted here or by a peer), with their error

	pendMu  sync.Mutex // leaf lock: guards pending
	reqMu   sync.Mutex // leaf lock: guards reqFree
	reqFree []*request // released requests kept for reuse (Release)
	pending map[*request]struct{}

	onAbort transport.AbortHook // see OnRemoteAbort

	authDropped atomic.Int64 // frames whose tag did not verify (auth.go)
}

var (
	_ transport.Endpoint = (*Endpoint)(nil)
	_ transport.Ender    = (*Endpoint)(nil)
)

// peer is the state of one peer rank, guarded by Endpoint.mu.
type peer struct {
	rank       int
	conns      []*conn // nil for the endpoint's own rank
	failed     error   // a *transport.PeerError once the peer failed
	ended      int     // connections the peer has half-closed (conn.readLoop)
	posted     map[transport.Tag][]*request
	unexpected map[transport.Tag][]*unexpected
	unexpCount int                    // entries in unexpected
	nextMsgID  uint64                 // number of the next rendezvous send
	rdvSend    map[uint64]*request    // rendezvous sends awaiting CTS
	rdvRecv    map[uint64]*rdvReceive // rendezvous receives awaiting data
	credit     int64                  // eager bytes we may still send it
	peerGrant  int64                  // the credit it granted us in total
	grant      int64                  // eager bytes it may have outstanding here
	inFlight   int64                  // its eager bytes not yet returned as credit
	owed       int64                  // of inFlight, bytes released but not returned yet
	count      transport.Counter      // completed messages (see TransportStats); not under Endpoint.mu
	free       freeLists              // kept for reuse (reuse.go)
}

// unexpected is a message that arrived before its receive was posted.
type unexpected struct {
	size    int
	data    []byte   // eager body, once arrived
	arrived bool     // eager body fully read
	claim   *request // receive matched while the body was still arriving
	dropped bool     // aborted while arriving: discard on arrival
	rts     bool     // a rendezvous request; msgID names it
	msgID   uint64
	send    *request // a send from this rank to itself
}

// rdvReceive is a matched rendezvous receive awaiting its data.
type rdvReceive struct {
	req      *request
	size     int
	received int
}

func newEndpoint(cfg Config, size int, grant int64) *Endpoint {
	e := &Endpoint{cfg: cfg, rank: cfg.Rank, size: size, pending: map[*request]struct{}{},
		ended: newAbortLog[error](cfg.AbortHistoryMax)}
	e.peers = make([]*peer, size)
	for i := range e.peers {
		e.peers[i] = &peer{rank: i, posted: map[transport.Tag][]*request{},
			unexpected: map[transport.Tag][]*unexpected{}, rdvSend: map[uint64]*request{},
			rdvRecv: map[uint64]*rdvReceive{}, grant: grant}
	}
	return e
}

// start launches the reader and writer goroutines of every connection.
func (e *Endpoint) start() {
	for _, p := range e.peers {
		for _, c := range p.conns {
			e.wg.Add(2)
			go c.readLoop()
			go c.writeLoop()
		}
	}
}

// Rank implements transport.Endpoint.
func (e *Endpoint) Rank() int { return e.rank }

// Size implements transport.Endpoint.
func (e *Endpoint) Size() int { return e.size }

// Send implements transport.Endpoint. Messages of at most Config.EagerLimit
// bytes go at once while the receiver's credit lasts; larger ones wait for
// the receiver to post its receive. A send to oneself completes when it is
// matched.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.size {
		return failedRequest(fmt.Errorf("send to rank %d of %d: %w", peer, e.size, transport.ErrBadRank))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Under e.mu: failPendingLocked fails the requests it found pending
	// after it lets go of pendMu, and a request released meanwhile must
	// not be reset for a new Send or Recv before it is done with them.
	r := newRequest(e, true, peer, tag, buf)
	p := e.peers[peer]
	if err := e.refuseLocked(tag.OpKey); err != nil {
		r.complete(0, err)
		return r
	}
	if p.failed != nil {
		r.complete(0, p.failed)
		return r
	}
	e.track(r)
	switch {
	case peer == e.rank:
		e.sendSelfLocked(p, r)
	case len(buf) == 0 || (len(buf) <= e.cfg.EagerLimit && p.credit >= int64(len(buf))):
		p.credit -= int64(len(buf))
		r.expect(len(buf))
		p.conns[0].enqueue(outFrame{h: header{kind: kindData, tag: tag, arg: uint64(len(buf)), body: uint32(len(buf))}, req: r})
	default:
		r.msgID, r.noReuse = p.nextMsgID, true
		p.nextMsgID++
		p.rdvSend[r.msgID] = r
		p.conns[0].enqueue(outFrame{h: header{kind: kindRTS, tag: tag, msgID: r.msgID, arg: uint64(len(buf))}, req: r})
	}
	return r
}

// Recv implements transport.Endpoint.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.size {
		return failedRequest(fmt.Errorf("receive from rank %d of %d: %w", peer, e.size, transport.ErrBadRank))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Under e.mu: failPendingLocked fails the requests it found pending
	// after it lets go of pendMu, and a request released meanwhile must
	// not be reset for a new Send or Recv before it is done with them.
	r := newRequest(e, false, peer, tag, buf)
	p := e.peers[peer]
	if err := e.refuseLocked(tag.OpKey); err != nil {
		r.complete(0, err)
		return r
	}
	e.track(r)
	if e.matchUnexpectedLocked(p, r) {
		return r
	}
	if p.failed != nil {
		r.fail(p.failed)
		return r
	}
	push(p.posted, &p.free.posted, tag, r)
	return r
}

// refuseLocked returns the error of a new request for op, if the endpoint
// is closed or op has ended here (aborted here, or by a peer that told
// this rank): then the error op ended with.
func (e *Endpoint) refuseLocked(op transport.OpKey) error {
	if e.closed {
		return transport.ErrClosed
	}
	if err, ok := e.ended.get(op); ok {
		return err
	}
	return nil
}

// Close implements transport.Endpoint. It fails pending requests with
// ErrClosed, lets each connection's writer write and flush what it holds
// (a send completes once its frame is in the write buffer: without this a
// send reported done could be lost), up to CloseFlushWait, then closes
// every connection (half-closing each first and reading until the peer
// closes it too, by the same deadline), and returns once every goroutine of
// the endpoint has ended. Peers see the connections break and fail their
// requests with this rank with a *transport.PeerError. Close is idempotent.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.failPendingLocked(func(*request) bool { return true }, transport.ErrClosed)
	e.mu.Unlock()
	deadline := time.Now().Add(CloseFlushWait)
	var wg sync.WaitGroup
	for _, p := range e.peers {
		for _, c := range p.conns {
			wg.Go(func() { c.flushAndShutdown(deadline) })
		}
	}
	wg.Wait()
	e.wg.Wait()
	return nil
}

// CloseFlushWait bounds how long Close lets the connections' writers
// write what they hold (the frames of sends that completed, which are in
// their write buffers) before it closes the sockets.
const CloseFlushWait = time.Second

// peerClosedConn records that the peer half-closed one of its connections
// and reports whether it has now closed all of them (or the endpoint is
// closed): then the peer has sent all it will.
func (e *Endpoint) peerClosedConn(p *peer) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p.ended++
	return p.ended >= len(p.conns) || e.closed
}

// peerFailed records that peer p failed with err: its pending requests
// fail with a *transport.PeerError, and its connections are closed. Only
// the first failure counts, and none after Close.
func (e *Endpoint) peerFailed(p *peer, err error) {
	e.mu.Lock()
	if e.closed || p.failed != nil {
		e.mu.Unlock()
		return
	}
	pe := &transport.PeerError{Rank: p.rank, Err: err}
	p.failed = pe
	e.failPendingLocked(func(r *request) bool { return r.peer == p.rank }, pe)
	clear(p.posted)
	clear(p.rdvSend)
	clear(p.rdvRecv)
	for tag, list := range p.unexpected {
		kept := list[:0]
		for _, u := range list {
			if u.arrived && !u.dropped {
				kept = append(kept, u) // data already here stays receivable
			} else {
				u.dropped = true
				p.unexpCount--
			}
		}
		store(p.unexpected, &p.free.unexp, tag, kept)
	}
	e.mu.Unlock()
	for _, c := range p.conns {
		c.shutdown()
	}
}

// track adds r to the pending set.
func (e *Endpoint) track(r *request) {
	e.pendMu.Lock()
	e.pending[r] = struct{}{}
	e.pendMu.Unlock()
}

// forget removes a completed r from the pending set.
func (e *Endpoint) forget(r *request) {
	e.pendMu.Lock()
	delete(e.pending, r)
	e.pendMu.Unlock()
}

// failPendingLocked fails every pending request for which match is true.
func (e *Endpoint) failPendingLocked(match func(*request) bool, err error) {
	var hit []*request
	e.pendMu.Lock()
	for r := range e.pending {
		if match(r) {
			hit = append(hit, r)
		}
	}
	e.pendMu.Unlock()
	for _, r := range hit {
		r.fail(err)
	}
}

// unhook removes a request being cancelled from the endpoint's queues, so
// that no message matches it any more.
func (e *Endpoint) unhook(r *request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.peers[r.peer]
	if !r.isSend {
		store(p.posted, &p.free.posted, r.tag, remove(p.posted[r.tag], r))
		return
	}
	if p.rdvSend[r.msgID] == r {
		delete(p.rdvSend, r.msgID)
	}
	if r.peer == e.rank {
		list := p.unexpected[r.tag]
		for i, u := range list {
			if u.send == r {
				store(p.unexpected, &p.free.unexp, r.tag, append(list[:i:i], list[i+1:]...))
				p.unexpCount--
				break
			}
		}
	}
}

// ErrWithdrawn is wrapped by the error of a receive whose rendezvous
// message the sender withdrew (cancelled or aborted) after it was matched.
var ErrWithdrawn = errors.New("tcp: sender withdrew the message")

func truncatedError(msg, buf int) error {
	return fmt.Errorf("%d-byte message, %d-byte buffer: %w", msg, buf, transport.ErrTruncated)
}

// remove returns list without r.
func remove[T comparable](list []T, r T) []T {
	for i, x := range list {
		if x == r {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}
