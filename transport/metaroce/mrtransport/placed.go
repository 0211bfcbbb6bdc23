package mrtransport

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// placer is a PathSocket that can look at the head of the next datagram
// without taking it, and read a datagram scattered over several buffers.
// With it the engine reads a DATA packet's payload straight into the
// receive buffer it belongs to (metaroce.Endpoint.Placement): the socket
// read is the only copy a received byte makes.
type placer interface {
	// peek blocks until a datagram has arrived, copies its first bytes
	// into head and returns its whole length; train is true for a GRO
	// train (several datagrams), which cannot be placed.
	peek(head []byte) (n int, train bool, err error)
	// readParts reads the next datagram into head, payload and tail in
	// turn and returns its length, ECN-CE mark and kernel receive stamp
	// (Message.Received).
	readParts(head, payload, tail []byte) (n int, ce bool, received int64, err error)
	// canPeek reports whether peek and readParts work on this system.
	canPeek() bool
	// peekLock is held by the socket's reader from a peek until it has
	// read the datagram it peeked at, or decided not to. Whoever else
	// reads the socket (a spinning waiter, the drain before a silence)
	// reads it only while holding it (TryLock), so that no read comes
	// between the peek and the read: it would take the peeked datagram,
	// and the reader would read the next one into the peeked one's place.
	peekLock() *sync.Mutex
}

// placeMinDatagram is the smallest Config.MaxDatagram for which the engine
// reads payloads into place: the peek costs a system call per datagram,
// which only a large payload's copy outweighs (loopback's 64 KB datagrams;
// not 1500 or 9000-byte frames).
const placeMinDatagram = 16 << 10

// placedReader is one reader's state for reading into place.
type placedReader struct {
	p    placer
	head []byte // the peeked head of the next datagram
	tail []byte // the rest after a placed payload: a piggybacked ACK, the CRC
}

// canPlace reports whether payloads read from s are read into place: s
// can peek and datagrams are large enough to be worth it.
func canPlace(s PathSocket, maxDatagram int) bool {
	p, ok := s.(placer)
	return ok && p.canPeek() && maxDatagram >= placeMinDatagram
}

// newPlacedReader returns the reader state for s, or nil unless canPlace.
func newPlacedReader(s PathSocket, maxDatagram int) *placedReader {
	if !canPlace(s, maxDatagram) {
		return nil
	}
	return &placedReader{p: s.(placer), head: make([]byte, wire.DataHeadLen), tail: make([]byte, maxDatagram)}
}

// batchLen is how many datagrams a reader reads at once when it does not
// place the next one: a whole batch without placement or while nothing
// can be placed (placing: the core's Placing); otherwise one, so that the
// DATA packets behind it are peeked at and placed in turn.
func (r *placedReader) batchLen(batch int, placing bool) int {
	if r == nil || !placing {
		return batch
	}
	return 1
}

// readPlaced waits for path's next datagram and, if it is a DATA packet
// whose payload has a place (metaroce.Endpoint.Placement), reads it there
// and processes it; it reports false, with the datagram still queued,
// otherwise. The read happens under mu, so that the receive buffer cannot
// be given back to its owner meanwhile, and from the peek on under the
// socket's peekLock, so that nobody else reads the peeked datagram.
func (e *engine) readPlaced(path int, r *placedReader) (bool, error) {
	pl := r.p.peekLock()
	pl.Lock()
	n, train, err := r.p.peek(r.head)
	if err != nil || train || n < wire.DataHeadLen+placeMinDatagram/2 {
		pl.Unlock()
		return false, err
	}
	if f := afterPeek.Load(); f != nil {
		(*f)(e, path)
	}
	e.lock()
	if e.closed {
		e.mu.Unlock()
		pl.Unlock()
		return false, nil
	}
	dst := e.core.Placement(path, r.head)
	rest := n - wire.DataHeadLen - len(dst)
	if dst == nil || rest < 0 || rest > len(r.tail) {
		e.mu.Unlock()
		pl.Unlock()
		return false, nil
	}
	got, ce, stamp, err := r.p.readParts(r.head, dst, r.tail[:rest])
	pl.Unlock()
	if err != nil || got != n {
		// Nobody read the socket between the peek and this read
		// (peekLock): a failure here is the socket's (closing). The datagram is gone:
		// the core resends what is lost.
		e.mu.Unlock()
		if err == nil {
			e.st.readErrors.Add(1)
		}
		return true, err
	}
	read := time.Now()
	now := e.nowAt(read)
	e.core.HandleDatagramPartsAt(now, e.arrival(path, now, read, stamp), path, ce, r.head, dst, r.tail[:rest])
	e.st.readBatches.Add(1)
	e.st.datagramsRead.Add(1)
	e.st.bytesRead.Add(int64(n))
	e.st.datagramsPlaced.Add(1)
	e.process(now)
	e.unlock()
	return true, nil
}

// afterPeek, when set (by tests only), runs in readPlaced between a peek
// at a payload it will try to place and the read. It is atomic: a test
// sets and clears it while readers run.
var afterPeek atomic.Pointer[func(e *engine, path int)]

// peekLock implements placer.
func (u *udpioSocket) peekLock() *sync.Mutex { return &u.peeking }

// peek implements placer.
func (u *udpioSocket) peek(head []byte) (int, bool, error) {
	m := udpio.Message{Buf: head}
	if err := u.s.Peek(&m); err != nil {
		return 0, false, err
	}
	return m.N, m.Segment > 0, nil
}

// canPeek implements placer: udpio peeks on Linux only.
func (u *udpioSocket) canPeek() bool { return u.s.Caps().Peek }

// readParts implements placer.
func (u *udpioSocket) readParts(head, payload, tail []byte) (int, bool, int64, error) {
	if len(u.rd) == 0 {
		u.rd = make([]udpio.Message, 1)
	}
	u.parts[0], u.parts[1] = payload, tail
	m := &u.rd[0]
	*m = udpio.Message{Buf: head, Gather: u.parts[:]}
	_, err := u.s.ReadBatch(u.rd[:1])
	n, ce, stamp := m.N, m.CE, m.Received
	*m, u.parts = udpio.Message{}, [2][]byte{}
	return n, ce, stamp, err
}
