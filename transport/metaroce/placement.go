package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Placement lets a driver read a DATA packet's payload straight into the
// receive buffer it belongs to, so that a receive costs no copy beyond
// the socket read. head is the first wire.DataHeadLen bytes of a datagram
// that arrived on path index path (read without taking the datagram off
// the socket: MSG_PEEK). Placement returns the slice of a posted receive
// buffer the payload goes to, exactly as long as the payload, or nil if
// the datagram is to be read whole and handed to HandleDatagram: it is no
// DATA packet, its payload is empty, its message is not matched yet, the
// piece is already in, or head disagrees with what is known of the
// message.
//
// head is not trusted: if the datagram turns out damaged, the bytes read
// into the slice land where the piece is still missing, and the intact
// copy overwrites them. The driver reads the datagram's head, payload and
// rest into head, the slice and a buffer of its own, and passes them to
// HandleDatagramParts before any other call on the endpoint (a cancelled
// receive's buffer goes back to its owner).
func (e *Endpoint) Placement(path int, head []byte) []byte {
	if path < 0 || path >= e.cfg.Paths {
		return nil
	}
	d := &e.data
	n, err := wire.PeekDataHead(head, d)
	if err != nil {
		return nil
	}
	c := e.conns[ConnID(d.Conn)]
	if c == nil || c.phase != phaseOpen || int(d.Path) != path || path >= len(c.paths) ||
		(c.auth != nil && c.auth.mode != AuthHeader) {
		return nil
	}
	return c.rcv.placement(d, n)
}

// HandleDatagramParts is HandleDatagram for a DATA packet read in three
// parts: head (its first wire.DataHeadLen bytes), payload (read where
// Placement said) and tail (the rest of the datagram). A datagram that is
// no well-formed DATA packet is counted and dropped like any other.
func (e *Endpoint) HandleDatagramParts(now time.Duration, path int, ecnCE bool, head, payload, tail []byte) {
	e.HandleDatagramPartsAt(now, now, path, ecnCE, head, payload, tail)
}

// HandleDatagramPartsAt is HandleDatagramParts for a datagram that
// arrived at arrived, as HandleDatagramAt.
func (e *Endpoint) HandleDatagramPartsAt(now, arrived time.Duration, path int, ecnCE bool, head, payload, tail []byte) {
	arrived = min(max(arrived, 0), now)
	e.catchUp(now)
	size := len(head) + len(payload) + len(tail)
	if !e.admit(path, size) {
		return
	}
	if e.keyed() {
		h, err := wire.PeekHeader(head)
		if err != nil {
			e.countOpenError(err)
			return
		}
		c := e.conns[ConnID(h.Conn)]
		if c == nil || c.auth == nil {
			e.st.DropAuth++
			return
		}
		var drop *int64
		if tail, drop = c.auth.openParts(&e.st, path, head, tail); drop != nil {
			*drop++
			return
		}
	}
	d := &e.data
	if err := wire.ParseDataParts(head, payload, tail, d); err != nil {
		e.countOpenError(err)
		return
	}
	if c := e.connOf(d.Conn); c != nil {
		e.count(c.acceptData(now, arrived, path, ecnCE, d, size))
	}
}

// Placing reports whether Placement may return a place for a datagram now
// or once a message begins: whether a message that has begun to arrive is
// matched to a posted receive and still unfinished, or a receive is
// posted, in either case for a message with a full piece after its first
// (the first opens the message and is never placed). A driver that peeks
// before each read needs to do so only while it does.
func (e *Endpoint) Placing() bool {
	for _, c := range e.conns {
		if c.rcv.matchedBig > 0 || c.rcv.postedBig > 0 {
			return true
		}
	}
	return false
}
