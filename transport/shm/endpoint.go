//go:build linux

package shm

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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

// heldTail takes for r, a RecvHead whose head of headLen bytes came before
// it, the rendezvous of its tail if that came too (held in unexpected
// behind the head) and fits: it claims it and counts r's copy (state
// copying), which copyTail then makes. The caller holds e.mu.
func (e *Endpoint) heldTail(r *request, headLen int) (slot, bool) {
	if r.tail == nil || headLen > len(r.buf) {
		return slot{}, false
	}
	q := e.unexpected[r.tailKey]
	if len(q) == 0 || !q[0].rdv || !e.tailFits(r, q[0].s) {
		return slot{}, false
	}
	s := q[0].s
	popFront(e.unexpected, r.tailKey, q, &e.unexFree)
	if !e.claim(int(r.tailKey.peer), s) {
		return slot{}, false // withdrawn by its sender: as if never sent
	}
	r.state.Store(stateCopying)
	e.copying.Add(1)
	return s, true
}

// tailFits reports whether the rendezvous s may be taken by r's RecvHead
// with its head: it is r's tail message, fits r's tail buffer, and no
// receive of it was posted before r. The caller holds e.mu.
func (e *Endpoint) tailFits(r *request, s slot) bool {
	return r.tail != nil && s.kind == kindRendezvous && s.length <= uint64(len(r.tail)) &&
		keyOf(int(r.tailKey.peer), s.tag) == r.tailKey && len(e.recvs[r.tailKey]) == 0
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

// deliverInline completes receive r with an inline message.
func deliverInline(r *request, msg []byte) {
	if len(msg) > len(r.buf) {
		r.complete(0, truncated(len(msg), len(r.buf)))
		return
	}
	r.complete(copy(r.buf, msg), nil)
}

func truncated(n, room int) error {
	return fmt.Errorf("shm: %d-byte message into %d-byte buffer: %w", n, room, transport.ErrTruncated)
}

// claim takes the rendezvous send s of peer for copying; false means its
// sender withdrew it. The caller holds e.mu.
func (e *Endpoint) claim(peer int, s slot) bool {
	idx, gen := sendWordOf(s.sendID)
	w := e.peers[peer].seg.sendWord(idx)
	return w.CompareAndSwap(sendWordValue(gen, sendPosted), sendWordValue(gen, sendClaimed))
}

// copyRendezvous copies the claimed message s of peer into receive r (in
// state copying, counted in e.copying), tells the sender (peer.copied) and
// completes r.
func (e *Endpoint) copyRendezvous(peer int, s slot, r *request) {
	defer e.copying.Done()
	n, err := e.readRendezvous(peer, s, r, r.buf)
	r.complete(n, err)
}

// copyTail is copyRendezvous for the tail of RecvHead r, whose head of
// headN bytes is in r.buf: it copies s into r.tail and completes r with
// the head's length.
func (e *Endpoint) copyTail(peer int, s slot, r *request, headN int) {
	defer e.copying.Done()
	n, err := e.readRendezvous(peer, s, r, r.tail)
	if err == nil {
		r.tailN, r.tailOK = n, true
		e.peers[peer].count.Count(false, n)
	}
	r.complete(headN, err)
}

// readRendezvous copies the claimed message s of peer into dst, a buffer
// of r, and tells the sender (peer.copied); it returns the bytes copied.
func (e *Endpoint) readRendezvous(peer int, s slot, r *request, dst []byte) (int, error) {
	p := e.peers[peer]
	n := int(s.length)
	var err error
	if n > len(dst) {
		err = truncated(n, len(dst))
	} else if err = readRemote(p.pid, dst[:n], s.addr, p.nonceAddr, p.nonce, &r.proof, e.balance.chunkHook()); err == nil &&
		p.nonceAddr == 0 && p.pidfd >= 0 && exited(p.pidfd) {
		err = &transport.PeerError{Rank: peer, Err: errExited} // its pid may name another process now
	} else if err != nil {
		err = &transport.PeerError{Rank: peer, Err: err}
	} else {
		e.stats.bytesCopied.Add(uint64(n))
	}
	if e.balance != nil {
		e.balance.note(time.Now())
	}
	if ferr := p.copied(s.sendID); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// popFront removes the first element of queue q, which is m[k], and the
// queue when it empties; the caller passes q so that the map is looked up
// once per message (its hashing was several per cent of a small
// collective's CPU time: bench/results/small_ops.md).
func popFront[T any](m map[matchKey][]T, k matchKey, q []T, f *queueFree[T]) {
	var zero T
	q[0] = zero
	if len(q) == 1 {
		delete(m, k)
		f.put(q)
	} else {
		m[k] = q[1:]
	}
}

// pushBack appends x to queue m[k], starting the queue on a backing array
// from f if it has none.
func pushBack[T any](m map[matchKey][]T, k matchKey, x T, f *queueFree[T]) {
	q := m[k]
	if q == nil {
		q = f.get()
	}
	m[k] = append(q, x)
}

// queueFree keeps the backing arrays of emptied queues (of e.recvs and
// e.unexpected) for the next queue, so that a steady stream of messages
// allocates none for them; it keeps at most queueFreeMax. Under e.mu.
type queueFree[T any] struct{ free [][]T }

const queueFreeMax = 256

func (f *queueFree[T]) get() []T {
	n := len(f.free)
	if n == 0 {
		return make([]T, 0, 2)
	}
	q := f.free[n-1]
	f.free[n-1] = nil
	f.free = f.free[:n-1]
	return q
}

func (f *queueFree[T]) put(q []T) {
	if cap(q) > 0 && len(f.free) < queueFreeMax {
		clear(q[:cap(q)])
		f.free = append(f.free, q[:0])
	}
}

// heldBufBytes is the size of the buffers that hold unexpected inline
// messages (any up to EagerMax: collective's header messages carry up to
// 4 KiB of data); heldFreeMax of them are kept for reuse (1 MiB), so that a
// steady stream of small messages that arrive before their receive
// allocates nothing for them.
const (
	heldBufBytes = EagerMax
	heldFreeMax  = 256
)

// holdCopy returns a copy of msg for the unexpected queue. The caller holds
// e.mu.
func (e *Endpoint) holdCopy(msg []byte) []byte {
	if n := len(e.heldFree); len(msg) <= heldBufBytes && n > 0 {
		b := e.heldFree[n-1]
		e.heldFree[n-1] = nil
		e.heldFree = e.heldFree[:n-1]
		return append(b, msg...)
	}
	if len(msg) <= heldBufBytes {
		return append(make([]byte, 0, heldBufBytes), msg...)
	}
	return append([]byte(nil), msg...)
}

// releaseHeld gives back a buffer of holdCopy once its message was
// delivered. The caller holds e.mu.
func (e *Endpoint) releaseHeld(b []byte) {
	if cap(b) == heldBufBytes && len(e.heldFree) < heldFreeMax {
		e.heldFree = append(e.heldFree, b[:0])
	}
}

// releaseSend returns the send word of r to the free list with a new
// generation. The caller holds e.mu.
func (e *Endpoint) releaseSend(r *request) {
	if !e.sends.has(r) {
		return
	}
	e.seg.sendWord(r.index).Store(sendWordValue((r.gen+1)&0xffffffff, sendFree))
	e.sends.drop(r)
}

// withdraw fails r with err if it has not completed. For a send whose copy
// has begun, and for a receive being filled, it waits for the copy to end:
// afterwards the transport does not touch r's buffer.
func (e *Endpoint) withdraw(r *request, err error) {
	e.mu.Lock()
	if r.state.Load() == stateDone {
		e.mu.Unlock()
		return
	}
	if !r.isSend {
		if r.state.Load() == statePending && e.removeRecv(r) {
			r.complete(0, err)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.awaitCopy(r)
		return
	}
	if e.cancelSend(r, err) {
		e.mu.Unlock()
		return
	}
	if r.endErr == nil {
		r.endErr = err
	}
	e.mu.Unlock()
	e.awaitCopy(r)
}

// cancelSend withdraws the rendezvous send r if its receiver has not
// claimed it, completing it with err. The caller holds e.mu.
func (e *Endpoint) cancelSend(r *request, err error) bool {
	if !e.sends.has(r) {
		return false
	}
	w := e.seg.sendWord(r.index)
	if !w.CompareAndSwap(sendWordValue(r.gen, sendPosted), sendWordValue(r.gen, sendCancelled)) {
		return false
	}
	e.releaseSend(r)
	r.complete(0, err)
	return true
}

// removeRecv takes the queued receive r out of e.recvs, in place: a queue
// it empties goes back to e.recvsFree, as popFront's do, so that a receive
// withdrawn in steady state (an eager root's) allocates no queue for the
// next one. The caller holds e.mu.
func (e *Endpoint) removeRecv(r *request) bool {
	q := e.recvs[r.key]
	for i, x := range q {
		if x == r {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			q = q[:len(q)-1]
			if len(q) == 0 {
				delete(e.recvs, r.key)
				e.recvsFree.put(q)
			} else {
				e.recvs[r.key] = q
			}
			return true
		}
	}
	return false
}
