//go:build linux

package shm

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gocoll/gocoll/transport"
)

// matchKey is the matching key of a message: the peer rank (its source at
// the receiver, its destination at the sender) and its tag.
//
// Its fields leave no padding, so that the maps hash it as one block of
// memory rather than field by field (bench/results/small_ops.md).
type matchKey struct {
	op   transport.OpKey
	seq  uint32
	peer int32 // a rank: below MaxWorldSize (Listen checks peers before keyOf)
}

// keyOf is the match key of a message from or to peer with tag.
func keyOf(peer int, tag transport.Tag) matchKey {
	return matchKey{op: tag.OpKey, seq: tag.Seq, peer: int32(peer)}
}

// arrival is a message that came before its receive was posted.
type arrival struct {
	inline []byte // an inline message, copied out of its slot
	s      slot   // a rendezvous: length, sendID and address
	rdv    bool
}

// Endpoint is one rank's shared-memory transport. All methods are safe for
// concurrent use.
type Endpoint struct {
	cfg   Config
	rank  int
	size  int
	home  Addr // this rank's address: its kernel and PID namespace
	log   *slog.Logger
	seg   *segment // this rank's segment
	memfd int
	bell  *doorbell
	peers []*peer // by rank; peers[rank] writes into this rank's own ring
	// eagerMax is the largest message sent in the ring: EagerMax, or what
	// fits half a ring.
	eagerMax int
	// goschedEvery is how many polls a spinning wait makes between yields
	// to this process's other goroutines (spinwait.UntilFuncEvery): 1 when
	// a peer rank lives in this process (NewLocalWorld), whose goroutine
	// must run for the wait to end, else spinGoschedEveryAlone or
	// spinGoschedEvery (goschedEveryFor).
	goschedEvery int
	// balance spreads this host's spinning ranks over its processors
	// (balance.go); nil unless they are processes that outnumber them.
	// Only a spinning wait that holds pollMu uses it.
	balance *balancer
	// boardSpinShort: Connect chose OversubscribedBoardSpinWait for
	// Config.BoardSpinWait (boardHost.SpinLong spins longer).
	boardSpinShort bool
	gathered       [EagerMax]byte // a long inline message, put together by the poller

	mu         sync.Mutex
	closed     bool
	recvs      map[matchKey][]*request   // posted receives without a message
	unexpected map[matchKey][]arrival    // messages without a posted receive
	reqFree    []*request                // released requests (Release), at most reqFreeMax
	recvsFree  queueFree[*request]       // emptied queues of recvs
	unexFree   queueFree[arrival]        // emptied queues of unexpected
	heldFree   [][]byte                  // buffers for held inline messages (holdCopy)
	held       int                       // inline arrivals held in unexpected
	heldBytes  int                       // and their bytes
	sends      sendTable                 // rendezvous sends in flight and the unused words
	aborted    map[transport.OpKey]error // ended operations
	abortOrder []transport.OpKey
	down       []error  // per peer: why it can no longer be reached; nil if it can
	hello      []bool   // per peer: its hello came (see greet)
	helloErr   []error  // per peer: its hello did not prove the job key (auth.go)
	hellos     chan int // the ranks whose hello came, for greet to count

	pollMu sync.Mutex // held by whoever drains the rings
	// spinAlso, set by SetSpinAlso, is called in every round of a
	// spinning wait, after this endpoint's own poll.
	spinAlso   atomic.Pointer[func()]
	mapMu      sync.RWMutex        // read-held by spin, which outlives no mapping
	unmapped   bool                // Close released the mappings; under mapMu
	copying    sync.WaitGroup      // copies into this rank's buffers under way
	backlogged atomic.Int32        // peers with slots waiting for ring space
	copiedSeen atomic.Uint64       // the segment's copiedCount at the last reapCopied
	stalled    atomic.Bool         // a ring holds a message MaxUnexpected keeps out
	onAbort    transport.AbortHook // see OnRemoteAbort
	boardsUsed []bool              // by board: claimed (board.go); under mu
	boardHost  boardHost
	stop       chan struct{}
	stopped    chan struct{}
	stats      counters
}

var (
	_ transport.Endpoint     = (*Endpoint)(nil)
	_ transport.Ender        = (*Endpoint)(nil)
	_ transport.Boards       = (*Endpoint)(nil)
	_ transport.HeadSender   = (*Endpoint)(nil)
	_ transport.HeadReceiver = (*Endpoint)(nil)
)

// counters are the endpoint's statistics; see Stats.
type counters struct {
	inlineSent, rendezvousSent, bytesCopied, backlogged, wakes, boardsClaimed, receives atomic.Uint64
}

// Stats are an endpoint's counters since Connect.
type Stats struct {
	InlineSent     uint64 // messages sent in the ring itself (up to EagerMax bytes)
	RendezvousSent uint64 // messages copied by their receiver from this rank
	BytesCopied    uint64 // bytes this rank copied from its peers
	Backlogged     uint64 // slots that waited for space in a full ring
	Wakes          uint64 // doorbells this rank rang
	BoardsClaimed  uint64 // boards claimed by communicators (transport.BoardHost)
	Receives       uint64 // receives posted (Recv, RecvHead): one request each
}

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() Stats {
	c := &e.stats
	return Stats{c.inlineSent.Load(), c.rendezvousSent.Load(), c.bytesCopied.Load(), c.backlogged.Load(), c.wakes.Load(), c.boardsClaimed.Load(), c.receives.Load()}
}

// Traits reports shared memory (see transport.Traits).
func (e *Endpoint) Traits() transport.Traits { return transport.Traits{SharedMemory: true} }

// Rank implements transport.Endpoint.
func (e *Endpoint) Rank() int { return e.rank }

// Size implements transport.Endpoint.
func (e *Endpoint) Size() int { return e.size }

// usable returns why a new request to or from peer cannot be posted, or
// nil. The caller holds e.mu.
func (e *Endpoint) usable(peer int, op transport.OpKey) error {
	switch {
	case e.closed:
		return transport.ErrClosed
	case e.down[peer] != nil:
		return e.down[peer]
	}
	return e.aborted[op]
}

// Send implements transport.Endpoint. A message of at most EagerMax bytes
// (less with small rings) is written into the peer's ring and the send
// completes at once; a larger one completes when the peer has copied it.
func (e *Endpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.size || e.peers[peer] == nil {
		return failed(fmt.Errorf("shm: send to rank %d of %d: %w", peer, e.size, transport.ErrBadRank))
	}
	e.mu.Lock()
	if err := e.usable(peer, tag.OpKey); err != nil {
		e.mu.Unlock()
		return failed(err)
	}
	if len(buf) <= e.eagerMax {
		e.mu.Unlock()
		s := slot{kind: kindInline, tag: tag, length: uint64(len(buf)), inline: buf}
		if err := e.peers[peer].put(&s); err != nil {
			return failed(err)
		}
		e.stats.inlineSent.Add(1)
		e.peers[peer].count.Count(true, len(buf))
		return sent(len(buf))
	}
	r, _ := e.rendezvous(peer, tag, buf, nil, 0)
	return r
}

// SendWithHead implements transport.HeadSender: head rides in the slot
// that announces buf's rendezvous when buf is larger than the ring
// carries, head at most InlineMax bytes, and the two tags name one
// operation; else they go as two Sends. The head's request is complete
// at once, as an inline send's.
func (e *Endpoint) SendWithHead(peer int, headTag transport.Tag, head []byte, tag transport.Tag, buf []byte) (transport.Request, transport.Request) {
	if peer < 0 || peer >= e.size || e.peers[peer] == nil || len(buf) <= e.eagerMax ||
		len(head) > InlineMax || headTag.OpKey != tag.OpKey {
		return e.Send(peer, headTag, head), e.Send(peer, tag, buf)
	}
	e.mu.Lock()
	if err := e.usable(peer, tag.OpKey); err != nil {
		e.mu.Unlock()
		return failed(err), failed(err)
	}
	r, err := e.rendezvous(peer, tag, buf, head, headTag.Seq)
	if err != nil {
		return failed(err), r
	}
	e.stats.inlineSent.Add(1)
	e.peers[peer].count.Count(true, len(head))
	return sent(len(head)), r
}

// rendezvous posts buf to peer as a rendezvous send, with head in its slot
// (SendWithHead); it returns the send's request and, if the slot was not
// written, the error it failed with. The caller holds e.mu, which
// rendezvous releases.
func (e *Endpoint) rendezvous(peer int, tag transport.Tag, buf, head []byte, headSeq uint32) (*request, error) {
	if e.sends.full() {
		e.mu.Unlock()
		err := fmt.Errorf("shm: %d rendezvous sends in flight (Config.MaxPendingSends)", e.cfg.MaxPendingSends)
		return failed(err), err
	}
	r := newRequest(e, true, buf, keyOf(peer, tag))
	e.sends.take(r)
	w := e.seg.sendWord(r.index)
	r.gen = w.Load() >> sendStateBits
	w.Store(sendWordValue(r.gen, sendPosted))
	e.mu.Unlock()
	s := slot{kind: kindRendezvous, tag: tag, length: uint64(len(buf)), headSeq: headSeq,
		sendID: sendIDOf(r.index, r.gen), addr: bufAddr(buf), inline: head}
	if err := e.peers[peer].put(&s); err != nil {
		e.withdraw(r, err)
		return r, err
	}
	e.stats.rendezvousSent.Add(1)
	return r, nil
}

// Recv implements transport.Endpoint.
func (e *Endpoint) Recv(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.size || e.peers[peer] == nil {
		return failed(fmt.Errorf("shm: receive from rank %d of %d: %w", peer, e.size, transport.ErrBadRank))
	}
	return e.recv(peer, tag, buf, nil, transport.Tag{})
}

// RecvHead implements transport.HeadReceiver. A message larger than the
// ring carries (len(buf) > EagerMax, less with small rings) may come with
// a head, in the slot that announces its rendezvous (SendWithHead): the
// receive of the head then copies it too, when it fits buf and no receive
// of tag waits before this one, and completes once it has. A head that
// comes alone completes the request at once, and tag's message is left
// for a later Recv.
func (e *Endpoint) RecvHead(peer int, headTag transport.Tag, head []byte, tag transport.Tag, buf []byte) transport.Request {
	if peer < 0 || peer >= e.size || e.peers[peer] == nil || len(buf) <= e.eagerMax || headTag.OpKey != tag.OpKey || headTag == tag {
		return nil
	}
	return e.recv(peer, headTag, head, buf, tag)
}

// recv posts the receive of tag from peer into buf, and, with tail, of
// the message tailTag that may come with it (RecvHead).
func (e *Endpoint) recv(peer int, tag transport.Tag, buf, tail []byte, tailTag transport.Tag) transport.Request {
	k := keyOf(peer, tag)
	e.mu.Lock()
	if err := e.usable(peer, tag.OpKey); err != nil && err != e.down[peer] {
		e.mu.Unlock()
		return failed(err) // a peer that is down may have sent this before: look (usable is asked again below)
	}
	r := newRequest(e, false, buf, k)
	if tail != nil {
		r.tail, r.tailKey = tail, keyOf(peer, tailTag)
	}
	e.stats.receives.Add(1)
	for q := e.unexpected[k]; len(q) > 0; q = e.unexpected[k] {
		a := q[0]
		popFront(e.unexpected, k, q, &e.unexFree)
		if !a.rdv {
			e.held--
			e.heldBytes -= len(a.inline)
			if t, ok := e.heldTail(r, len(a.inline)); ok {
				n := copy(r.buf, a.inline)
				e.releaseHeld(a.inline)
				e.mu.Unlock()
				e.unstall()
				e.copyTail(peer, t, r, n)
				return r
			}
			deliverInline(r, a.inline) // r is nobody else's yet
			e.releaseHeld(a.inline)
			e.mu.Unlock()
			e.unstall()
			return r
		}
		if e.claim(peer, a.s) {
			r.state.Store(stateCopying)
			e.copying.Add(1)
			e.mu.Unlock()
			e.copyRendezvous(peer, a.s, r)
			return r
		}
		// The sender withdrew that message; the next one may match.
	}
	if err := e.usable(peer, tag.OpKey); err != nil {
		e.mu.Unlock()
		return failed(err)
	}
	pushBack(e.recvs, k, r, &e.recvsFree)
	e.mu.Unlock()
	e.unstall()
	return r
}

// unstall lets the progress goroutine read the rings again after a receive
// was posted or an unexpected message taken, if MaxUnexpected had stopped it.
func (e *Endpoint) unstall() {
	if !e.stalled.Load() {
		return
	}
	e.mapMu.RLock()
	defer e.mapMu.RUnlock()
	if !e.unmapped && e.stalled.CompareAndSwap(true, false) {
		ringDoorbell(e.bell.fd)
	}
}
