package udpio

import (
	"fmt"
	"net"
	"os"
	"time"
)

// ended returns why a reader must stop between batches: net.ErrClosed
// once Close began, os.ErrDeadlineExceeded once the read deadline passed,
// else nil.
func (s *Socket) ended() error {
	if s.closing.Load() {
		return fmt.Errorf("udpio: read %v: %w", s.local, net.ErrClosed)
	}
	if d := s.readDeadline.Load(); d != 0 && time.Now().UnixNano() >= d {
		return fmt.Errorf("udpio: read %v: %w", s.local, os.ErrDeadlineExceeded)
	}
	return nil
}

// each is ReadEach's loop: every recvmmsg and every handle run inside one
// RawConn.Read. A raw read's function that returns false waits for the
// runtime's poller, which watches the socket edge-triggered and keeps a
// readiness that arrived while nobody waited: so after a batch shorter than
// asked (the queue was empty when the kernel filled it), it waits at once,
// and a datagram that came during handle, or between the read and the wait,
// ends the wait at once. A new RawConn.Read forgets such a readiness (it
// resets the poller's state before its first call), which is why a plain
// ReadBatch loop must try a read, mostly EAGAIN, before each wait.
func (r *reader) each(s *Socket, ms []Message, handle func(n int) bool) error {
	cnt := min(len(ms), len(r.hs))
	for i := range cnt {
		if len(ms[i].Gather) > MaxGather {
			return fmt.Errorf("%w: message %d has %d slices", errBadGather, i, len(ms[i].Gather))
		}
	}
	stopped := false
	var ended error
	r.cnt, r.flags, r.errno = cnt, 0, 0
	// dirty is how many leading entries need their headers set before the
	// next recvmmsg: all at first; then those the last one filled, whose
	// lengths the kernel overwrote, and the one after (a recvmmsg that
	// fails writes back nothing, and the iovecs, which the kernel only
	// reads, stay). A datagram or two a read is the common case, and the
	// batch is mostly longer (the engine's 16).
	dirty := cnt
	defer r.release(cnt)
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			for i := range dirty {
				r.set(i, ms[i].Buf, ms[i].Gather, sockaddrSlot, r.oobLen)
			}
			r.eachSets += dirty
			dirty = 0
			got := r.recv(fd)
			r.eachReads++
			if !got || r.errno != 0 {
				return got // EAGAIN: wait; an error: return it
			}
			n := r.n
			dirty = min(n+1, cnt)
			for i := range n {
				r.unpack(i, &ms[i], false)
			}
			if !handle(n) {
				stopped = true
				return true
			}
			if n < cnt {
				return false // the queue was empty: wait, not read
			}
			// Batches keep coming full: the poller, which sees Close and
			// the deadline, is not asked; look here. Returning false
			// instead would wait on a readiness already consumed.
			if ended = s.ended(); ended != nil {
				return true
			}
		}
	})
	if err != nil {
		return err
	}
	if ended != nil {
		return ended
	}
	if stopped {
		return nil
	}
	e := r.errno
	r.errno = 0
	s.errsPending.Store(true)
	return os.NewSyscallError("recvmmsg", e)
}
