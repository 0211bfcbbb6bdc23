package udpio

import (
	"os"
	"sync"
)

// TryReader reads a Socket's datagrams without ever waiting: the reads of
// a goroutine that polls the socket itself for a while (see [Poller])
// while a ReadBatch may be blocked on the same socket in another goroutine;
// the kernel hands each datagram to one of them. Its ReadBatch calls are
// serialised.
type TryReader struct {
	s  *Socket
	mu sync.Mutex // guards rd
	rd reader
	fn func(fd uintptr) // recv, bound once so calls do not allocate
}

// NewTryReader makes a TryReader of s that reads up to batch datagrams a
// call.
func NewTryReader(s *Socket, batch int) *TryReader {
	t := &TryReader{s: s}
	t.rd.init(max(batch, 1), !s.local.Addr().Is4())
	t.fn = t.recv
	return t
}

// ReadBatch is [Socket.ReadBatch], except that it returns 0 at once when
// no datagram is queued, and that it does not scatter: each ms[i].Gather
// is ignored.
func (t *TryReader) ReadBatch(ms []Message) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.rd
	r.cnt = min(len(ms), len(r.hs))
	if r.cnt == 0 {
		return 0, nil
	}
	for i := range r.cnt {
		r.set(i, ms[i].Buf, nil, sockaddrSlot, r.oobLen)
	}
	r.flags = 0
	// Control, not Read: Read takes the socket's read lock, which a
	// ReadBatch blocked in another goroutine holds until a datagram comes.
	err := t.s.raw.Control(t.fn)
	r.release(r.cnt)
	if err != nil {
		return 0, err
	}
	if r.errno != 0 {
		t.s.errsPending.Store(true)
		return 0, os.NewSyscallError("recvmmsg", r.errno)
	}
	for i := range r.n {
		ms[i].Gather = nil
		r.unpack(i, &ms[i], false)
	}
	return r.n, nil
}

// recv runs reader.recv's recvmmsg on fd, but never waits: nothing
// queued (EAGAIN) reads as no datagram.
func (t *TryReader) recv(fd uintptr) {
	if !t.rd.recv(fd) {
		t.rd.n, t.rd.errno = 0, 0
	}
}
