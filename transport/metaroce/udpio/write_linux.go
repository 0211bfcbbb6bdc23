package udpio

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writer holds the state of WriteBatch. A batch entry is a whole message,
// or one segment of a train sent without GSO; ent records where each entry
// came from so that a partial send can resume at the right byte.
type writer struct {
	headers
	ent    []entry
	sendFn func(fd uintptr) bool // w.send, bound once so calls do not allocate
	cnt    int                   // entries to send
	n      int                   // entries sent
	errno  unix.Errno
	// failGSO makes every GSO send fail with EIO, as on a route whose
	// device cannot segment UDP (a test hook).
	failGSO bool
}

// entry locates one sendmmsg entry in the caller's messages.
type entry struct {
	msg int  // index in ms
	off int  // first byte in ms[msg].Buf
	gso bool // sent as a GSO train
}

// cursor is the next byte to send: message msg, from byte off.
type cursor struct{ msg, off int }

func (w *writer) init(batch int, v6 bool) {
	w.headers.init(batch, writeControlLen, writeIovSlots, v6)
	w.ent = make([]entry, batch)
	w.sendFn = w.send
}

// send runs sendmmsg on fd; it returns false to wait for writability.
func (w *writer) send(fd uintptr) bool {
	cnt := w.cnt
	if w.failGSO {
		for i := range cnt {
			if w.ent[i].gso {
				cnt = i
				break
			}
		}
		if cnt == 0 {
			w.n, w.errno = 0, unix.EIO
			return true
		}
	}
	for {
		n, e := w.mmsg(unix.SYS_SENDMMSG, fd, cnt, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			w.n, w.errno = int(n), 0
		default:
			w.n, w.errno = 0, e
		}
		return true
	}
}

func (w *writer) write(s *Socket, ms []Message) (int, error) {
	at := cursor{}
	for at.msg < len(ms) {
		next, err := w.pack(s, ms, at)
		if err != nil {
			return at.msg, err
		}
		err = s.raw.Write(w.sendFn)
		w.release(w.cnt)
		if err != nil {
			return at.msg, err
		}
		if w.n == w.cnt {
			at = next
			continue
		}
		at = cursor{w.ent[w.n].msg, w.ent[w.n].off}
		switch {
		case w.errno == unix.EIO && w.ent[w.n].gso:
			// The route cannot segment: send trains one datagram at a time
			// from now on, starting with this one.
			s.gsoOff.Store(true)
		case w.errno != 0:
			s.errsPending.Store(true)
			return at.msg, os.NewSyscallError("sendmmsg", w.errno)
		case w.n == 0:
			return at.msg, fmt.Errorf("udpio: sendmmsg: %w", io.ErrNoProgress)
		default:
			// Stopped short without an error: the send buffer filled, or
			// the socket had a pending error, consumed unseen (see
			// ErrorsPending). Go on from the first datagram not sent.
			s.errsPending.Store(true)
		}
	}
	return len(ms), nil
}

// pack fills the batch with entries from at on and returns the cursor past
// them. A message that cannot be sent is an error only when it comes first;
// otherwise the batch ends before it and the next call reports it.
func (w *writer) pack(s *Socket, ms []Message, at cursor) (cursor, error) {
	gso := s.caps.GSO && !s.gsoOff.Load()
	k := 0
	for at.msg < len(ms) && k < len(w.hs) {
		m := &ms[at.msg]
		e := entry{msg: at.msg, off: at.off}
		size := m.Size()
		n := size - at.off // the bytes of this entry: the rest of m, or less for a train
		isTrain := m.Segment > 0 && n > m.Segment
		nameLen, err := putSockaddr(w.names[k*sockaddrSlot:], m.Addr, w.v6)
		if err == nil {
			err = checkSegment(m)
		}
		if err != nil {
			if k > 0 {
				break
			}
			return at, fmt.Errorf("udpio: message %d to %v: %w", at.msg, m.Addr, err)
		}
		ctl := 0
		switch {
		case isTrain && gso:
			n = min(n, gsoSegments(m.Segment)*m.Segment)
			if n > m.Segment {
				e.gso = true
				ctl = putSegmentCmsg(w.oob[k*w.oobLen:], uint16(m.Segment))
			}
		case isTrain:
			n = m.Segment
		}
		if m.Class&63 != 0 {
			var ecn uint8
			if s.caps.ECN {
				ecn = ecnECT0
			}
			v6 := w.v6 && !m.Addr.Addr().Unmap().Is4() // a v4 peer (mapped or not) of a dual-stack socket takes IP_TOS
			ctl += putClassCmsg(w.oob[k*w.oobLen+ctl:], m.Class, ecn, v6)
		}
		w.setRange(k, m.Buf, m.Gather, at.off, n, nameLen, ctl)
		w.ent[k] = e
		k++
		at.off += n
		if at.off >= size {
			at = cursor{msg: at.msg + 1}
		}
	}
	w.cnt = k
	return at, nil
}

// gsoSegments is the number of segments of seg bytes that one GSO send
// carries at most: MaxSegments, and no more than MaxPayload bytes.
func gsoSegments(seg int) int {
	return max(1, min(MaxSegments, MaxPayload/seg))
}

var errBadSegment = errors.New("udpio: bad segment size")

// checkSegment checks the Segment and Gather fields of a message to send.
func checkSegment(m *Message) error {
	if m.Segment < 0 || (m.Segment > MaxSegmentSize && m.Size() > m.Segment) {
		return fmt.Errorf("%w %d", errBadSegment, m.Segment)
	}
	if len(m.Gather) > maxGatherOf(m) {
		return fmt.Errorf("%w: %d slices with segment %d", errBadGather, len(m.Gather), m.Segment)
	}
	return nil
}
