package mrtransport

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// Endpoint is one rank's [transport.Endpoint] over MetaRoCE: one core
// connection to every other rank, over Config.Paths UDP sockets. It is
// built by [Listener.Connect] or [NewLocalWorld]. All methods are safe for
// concurrent use.
type Endpoint struct {
	cfg    Config
	eng    *engine
	log    *slog.Logger
	binds  []pathBind // where each path socket is bound (nil: not by Listen)
	repick *repicker  // nil: ports are not re-picked; guarded by eng.mu
	// sampler is the send sampler (Config.SendSamples; sampler.go), nil
	// when off.
	sampler *sampler

	// Everything below is guarded by eng.mu.
	peers     []*peer // by rank; nil at this rank
	byConn    map[metaroce.ConnID]*peer
	self      selfBox
	ended     endedOps
	closed    bool
	draining  bool // set by Close while it lingers: see withdrawPending
	nUp       int
	connected chan struct{} // closed when every peer is up
	// refused is closed, with authErr set, when a connection being set
	// up failed its handshake for the job key (metaroce.ErrAuth): Connect
	// fails at once rather than dialling again.
	refused   chan struct{}
	authErr   error
	closing   chan struct{} // closed by Close as it begins
	closeDone chan struct{} // closed by Close once it has ended (a later Close waits for it)
	nBlocked  int           // receives waiting for a truncated message to drain
	eagerHeld int           // bytes of eager sends' copies held (Config.EagerBuffer)
	eagerFree eagerPool     // copies of completed eager sends, for reuse
	reqFree   []*request    // released requests, for reuse (Release)
	counters  endpointCounters
	// freeQueues are emptied request queues (finish) kept, with their
	// backing arrays, for the next key's (enqueue): at most freeQueuesMax.
	freeQueues []*queue

	onAbort  transport.AbortHook // see OnRemoteAbort
	autoOnce sync.Once           // autoCoalesce, at the first Connect
}

var (
	_ transport.Endpoint = (*Endpoint)(nil)
	_ transport.Ender    = (*Endpoint)(nil)
)

// endpointCounters count what the transport layer ignored or discarded.
type endpointCounters struct {
	strayEvents int64 // core events that matched no request
	badControl  int64 // control messages that failed to parse
	ctrlDropped int64 // control messages the core refused to queue
	sinks       int64 // messages of ended operations discarded
}

// peer is the state of the connection to one other rank.
type peer struct {
	rank  int
	addrs []netip.AddrPort // the peer's path sockets, by path index
	// maxDatagram, if not 0, limits the datagrams of the connection this
	// side dials (the route's MTU; see Endpoint.datagramLimits).
	maxDatagram int
	conn        metaroce.ConnID // 0 until dialed or accepted
	up          bool
	err         error // set when the connection failed; later requests fail with it
	// excluded: another transport reaches this peer (ConnectExcept).
	excluded bool

	sends, recvs map[msgKey]*queue
	blocked      []*request // receive heads refused as duplicates, retried after input

	ctrlOut, ctrlIn uint64            // next control message number out and in
	ctrlSends       map[msgKey][]byte // control messages in flight
	ctrlBuf         []byte            // the posted control receive's buffer
	unexpected      map[msgKey]int    // messages the core holds without a receive
}

func newEndpoint(cfg Config, eng *engine) *Endpoint {
	e := &Endpoint{cfg: cfg, eng: eng, log: cfg.Logger.With("rank", cfg.Rank), eagerFree: eagerPool{limit: cfg.EagerBuffer},
		peers: make([]*peer, cfg.Size), byConn: make(map[metaroce.ConnID]*peer),
		self: newSelfBox(), ended: newEndedOps(cfg.AbortMemory), connected: make(chan struct{}),
		refused: make(chan struct{}), closing: make(chan struct{}), closeDone: make(chan struct{})}
	for r := range e.peers {
		if r != cfg.Rank {
			e.peers[r] = &peer{rank: r, sends: make(map[msgKey]*queue), recvs: make(map[msgKey]*queue),
				ctrlSends: make(map[msgKey][]byte), unexpected: make(map[msgKey]int)}
		}
	}
	if cfg.Size == 1 {
		close(e.connected)
	}
	eng.route, eng.nodeAt, eng.handle, eng.afterInput = e.route, e.nodeAt, e.handle, e.retryBlocked
	eng.far.of = e.farPeers
	eng.stall.log = e.log
	return e
}

// Rank is this endpoint's rank.
func (e *Endpoint) Rank() int { return e.cfg.Rank }

// Size is the number of ranks in the world.
func (e *Endpoint) Size() int { return e.cfg.Size }

// PreferredChunk is the chunk size MetaRoCE asks collectives to pipeline
// in (transport.Traits.ChunkBytes). A message costs a core message, a
// grant, acknowledgements, an event and a request whatever its size. On
// loopback, 4 ranks, medians of 4 interleaved runs, every study found a
// ring AllReduce of 4 / 16 / 64 MiB cut in 2 MiB chunks faster than in
// 512 KiB ones: by 3-21 / 8-18 / 8-16 % over four studies, out of place
// and in place (smaller chunks were slower still).
const PreferredChunk = 2 << 20

// Traits implements transport's optional Traits: no shared memory, and
// PreferredChunk.
func (e *Endpoint) Traits() transport.Traits { return transport.Traits{ChunkBytes: PreferredChunk} }

// Addr returns the addresses of this endpoint's path sockets now: as
// published to the other ranks, but for paths whose port was re-picked
// since (Config.Repick), which the peers were told.
func (e *Endpoint) Addr() PeerAddr {
	a := PeerAddr{Paths: make([]netip.AddrPort, len(e.eng.socks))}
	for i := range a.Paths {
		a.Paths[i] = e.eng.sock(i).LocalAddr()
	}
	return a
}

// route maps a transmit to its peer socket's address. The caller holds
// eng.mu.
func (e *Endpoint) route(node uint64, path int) (netip.AddrPort, bool) {
	if node >= uint64(len(e.peers)) || e.peers[node] == nil {
		return netip.AddrPort{}, false
	}
	p := e.peers[node]
	if path < 0 || path >= len(p.addrs) {
		return netip.AddrPort{}, false
	}
	return p.addrs[path], true
}

// Send posts buf to peer under tag; see [transport.Endpoint]. Messages
// with the same tag to the same peer go one at a time, each when the one
// before it has been acknowledged. The request completes (or fails) only
// once no write in progress reads buf: datagrams may carry payloads
// straight from it (a gathering write, outside the engine's lock), and a
// send can end while one waits to be written (a Cancel, a failure, or a
// resend acknowledged on another path first); the end then waits for
// that write.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	return e.post(true, peer, tag, buf)
}

// Recv posts a receive from peer under tag into buf; see
// [transport.Endpoint]. The core writes the message's datagrams straight
// into buf as they arrive.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	return e.post(false, peer, tag, buf)
}

func (e *Endpoint) post(isSend bool, peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.cfg.Size {
		what := "receive from"
		if isSend {
			what = "send to"
		}
		return failed(fmt.Errorf("mrtransport: %s rank %d of %d: %w", what, peer, e.cfg.Size, transport.ErrBadRank))
	}
	e.eng.lockAPI()
	defer e.eng.unlock()
	if err := e.refusal(isSend, tag.OpKey, peer); err != nil {
		return failed(err)
	}
	r := newRequest(e, isSend, peer, tag, buf)
	if peer == e.cfg.Rank {
		e.self.post(r)
		return r
	}
	now := e.eng.now()
	e.enqueue(now, e.peers[peer], r)
	e.eng.process(now)
	return r
}

// refusal returns the error of a new request for op with peer, or nil if
// it may be posted. A receive from a peer whose connection ended goes on
// to the core, which still holds the whole messages that had arrived
// (see submit). The caller holds eng.mu.
func (e *Endpoint) refusal(isSend bool, op transport.OpKey, peer int) error {
	if e.closed {
		return transport.ErrClosed
	}
	if err := e.ended.get(op); err != nil {
		return err
	}
	if p := e.peers[peer]; p != nil && p.err != nil && (isSend || !p.ended()) {
		return p.err
	}
	return nil
}

// enqueue appends r to its key's queue and hands it to the core if it is
// the head. The caller holds eng.mu.
func (e *Endpoint) enqueue(now time.Duration, p *peer, r *request) {
	qs := p.queues(r.isSend)
	q := qs[r.key]
	if q == nil {
		if n := len(e.freeQueues); n > 0 {
			q = e.freeQueues[n-1]
			e.freeQueues[n-1] = nil
			e.freeQueues = e.freeQueues[:n-1]
		} else {
			q = &queue{}
		}
		qs[r.key] = q
	}
	q.reqs = append(q.reqs, r)
	if len(q.reqs) == 1 {
		e.submit(now, p, r)
	}
}

func (p *peer) queues(isSend bool) map[msgKey]*queue {
	if isSend {
		return p.sends
	}
	return p.recvs
}

// ended reports whether p's connection was up and ended for a reason
// other than this side's Close: the core then keeps the whole messages
// that had arrived, which receives posted since still take. The caller
// holds eng.mu.
func (p *peer) ended() bool { return p.err != nil && p.conn != 0 && !p.up }

// submit hands the head of a queue to the core. A receive whose key the
// core still holds (the rest of a truncated message is arriving) waits in
// p.blocked and is retried after each input. After the connection ended, a
// receive still goes to the core, which completes it with a whole message
// that had arrived or refuses it; it then fails with p.err. The caller
// holds eng.mu.
func (e *Endpoint) submit(now time.Duration, p *peer, r *request) {
	if p.err != nil && (r.isSend || !p.ended()) && !e.drains(p, r) {
		e.finish(now, p, r, 0, p.err)
		return
	}
	r.state = stateInCore
	core, k := e.eng.core, r.key
	var err error
	if r.isSend {
		buf, eager := r.buf, e.eager(r)
		pooled := eager && len(buf) > 0
		if pooled {
			buf = e.eagerFree.get(len(r.buf))
			copy(buf, r.buf)
		}
		err = core.Send(now, p.conn, k.stream, k.msg, buf)
		if err == nil && eager {
			r.release(buf, pooled)
		}
	} else {
		err = core.PostRecv(now, p.conn, k.stream, k.msg, r.buf)
	}
	switch {
	case err == nil:
		if !r.isSend {
			p.matchedUnexpected(r.key)
		}
	case p.err != nil:
		e.finish(now, p, r, 0, p.err) // the ended connection holds no such message
	case errors.Is(err, metaroce.ErrUnknownConn):
		r.state = stateQueued // the connection is closing; its EventClosed fails r
	case !r.isSend && errors.Is(err, metaroce.ErrDuplicate):
		r.state = stateQueued
		p.blocked = append(p.blocked, r)
		e.nBlocked++
	default:
		e.finish(now, p, r, 0, e.peerError(p, err)) // ErrPeerClosed etc.: the connection just ended
	}
}

// eager reports whether send r is to be copied and completed at once.
// Once Close has begun, no send is: one that Close lets go completes
// only when the peer has acknowledged it. The caller holds eng.mu.
func (e *Endpoint) eager(r *request) bool {
	n := len(r.buf)
	return !e.closed && !r.released && !r.sink && n <= e.cfg.EagerBytes && e.eagerHeld+n <= e.cfg.EagerBuffer
}

// finish completes r, takes it out of its queue and hands the next request
// with its key to the core. The caller holds eng.mu.
func (e *Endpoint) finish(now time.Duration, p *peer, r *request, n int, err error) {
	qs := p.queues(r.isSend)
	q := qs[r.key]
	wasHead := q != nil && q.head() == r
	if q != nil {
		q.remove(r)
	}
	if r.sink {
		e.counters.sinks++
	}
	r.complete(n, err)
	if q == nil || len(q.reqs) > 0 && !wasHead {
		return
	}
	if len(q.reqs) == 0 {
		delete(qs, r.key)
		q.draining = false
		if len(e.freeQueues) < freeQueuesMax { // nothing else holds q
			e.freeQueues = append(e.freeQueues, q)
		}
		return
	}
	e.submit(now, p, q.head())
}

// freeQueuesMax bounds Endpoint.freeQueues.
const freeQueuesMax = 256

// withdraw ends r with err wherever it is: in the core (cancelled there, so
// the core no longer touches its buffer), blocked, or queued. The caller
// holds eng.mu.
func (e *Endpoint) withdraw(now time.Duration, p *peer, r *request, err error) {
	switch r.state {
	case stateDone:
		return
	case stateInCore:
		k := r.key
		if r.isSend {
			e.eng.core.CancelSend(now, p.conn, k.stream, k.msg)
		} else {
			e.eng.core.CancelRecv(now, p.conn, k.stream, k.msg)
		}
	case stateQueued:
		e.unblock(p, r)
	}
	e.finish(now, p, r, 0, err)
}

func (e *Endpoint) unblock(p *peer, r *request) {
	for i, b := range p.blocked {
		if b == r {
			p.blocked = append(p.blocked[:i], p.blocked[i+1:]...)
			e.nBlocked--
			return
		}
	}
}

// retryBlocked posts again the receives the core refused because a
// truncated message with their key was still arriving. It runs after every
// input; it costs nothing when no receive is blocked. The caller holds
// eng.mu.
func (e *Endpoint) retryBlocked(now time.Duration) {
	if e.nBlocked == 0 {
		return
	}
	for _, p := range e.peers {
		if p == nil || len(p.blocked) == 0 {
			continue
		}
		blocked := p.blocked
		p.blocked = nil
		e.nBlocked -= len(blocked)
		for _, r := range blocked {
			e.submit(now, p, r)
		}
	}
}

// cancel is Request.Cancel.
func (e *Endpoint) cancel(r *request) {
	e.eng.lockAPI()
	e.cancelLocked(r)
	// An eager send's buffer is its copy, not the caller's.
	held := r.holds > 0 && !r.released
	e.eng.unlock()
	if held {
		e.eng.awaitWrites(r)
	}
}

// cancelLocked is cancel under the engine's lock.
func (e *Endpoint) cancelLocked(r *request) {
	if r.state == stateDone || r.released {
		return
	}
	if r.peer == e.cfg.Rank {
		e.self.cancel(r, transport.ErrCancelled)
		return
	}
	now := e.eng.now()
	e.withdraw(now, e.peers[r.peer], r, transport.ErrCancelled)
	e.eng.process(now)
}
