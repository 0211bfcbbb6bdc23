package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// HandleDatagram processes a datagram that arrived at time now on the
// socket of path index path, with ecnCE set if its IP header carried
// ECN-CE. The core does not keep b, but may change it (an encrypted
// packet is decrypted in place). Bad datagrams are counted in Stats and
// dropped. It is HandleDatagramAt with the arrival at now.
func (e *Endpoint) HandleDatagram(now time.Duration, path int, ecnCE bool, b []byte) {
	e.HandleDatagramAt(now, now, path, ecnCE, b)
}

// HandleDatagramAt is HandleDatagram for a datagram handed over at now
// that arrived earlier, at arrived (on now's clock; the kernel's receive
// timestamp): the time it waited in the socket for the driver to read it
// is the receiver's scheduling delay, not the network's. The arrival is
// used only where a delay is measured (see "Arrival times" in the package
// documentation); timers, and every state that a later input is compared
// with, take now, so time never runs backwards. An arrival after now
// counts as now, one before 0 as 0.
func (e *Endpoint) HandleDatagramAt(now, arrived time.Duration, path int, ecnCE bool, b []byte) {
	arrived = min(max(arrived, 0), now)
	e.catchUp(now)
	if !e.admit(path, len(b)) {
		return
	}
	b, drop := e.unseal(path, b)
	if drop != nil {
		*drop++
		return
	}
	h, body, err := wire.Open(b)
	if err != nil {
		e.countOpenError(err)
		return
	}
	if h.Type == wire.TypeHello {
		e.handleHello(now, path, h, body)
		return
	}
	if c := e.connOf(h.Conn); c != nil {
		e.count(c.handle(now, arrived, path, ecnCE, h, body))
	}
}

// admit reports whether a datagram of size bytes on path index path may
// be parsed, counting it as dropped if not.
func (e *Endpoint) admit(path, size int) bool {
	switch {
	case size > e.cfg.MaxDatagram:
		e.st.DropTooLarge++
	case path < 0 || path >= e.cfg.Paths:
		e.st.DropBadPath++
	default:
		return true
	}
	return false
}

// connOf returns the connection a parsed packet names, ready for its
// input, or nil (counted) if there is none.
func (e *Endpoint) connOf(id uint64) *conn {
	c := e.conns[ConnID(id)]
	if c == nil {
		e.st.DropUnknownConn++
		return nil
	}
	c.timerOK = false
	return c
}

// count bumps the drop counter a handler returned, if any.
func (e *Endpoint) count(drop *int64) {
	if drop != nil {
		*drop++
	}
}

func (e *Endpoint) countOpenError(err error) {
	switch err {
	case wire.ErrShort:
		e.st.DropShort++
	case wire.ErrVersion:
		e.st.DropVersion++
	case wire.ErrChecksum:
		e.st.DropChecksum++
	default:
		e.st.DropMalformed++
	}
}

// handleHello accepts a connection, or owes a HELLO-ACK again for one
// already accepted.
func (e *Endpoint) handleHello(now time.Duration, path int, hd wire.Header, body []byte) {
	var h wire.Hello
	if wire.DecodeHello(hd, body, &h) != nil || h.Ack {
		e.st.DropMalformed++
		return
	}
	if e.keyed() != (h.Auth != uint8(AuthNone)) || (e.keyed() && !e.helloProven(&h, nil)) {
		e.refuse(path, &h)
		return
	}
	key := acceptKey{h.Node, h.Src}
	if c := e.accepted[key]; c != nil {
		c.helloAck, c.lastRecv, c.timerOK, c.helloEcho = true, now, false, h.SentAt
		return
	}
	if len(e.conns) >= e.cfg.MaxConns {
		e.st.DropMalformed++ // no room: the peer retries until its timeout
		return
	}
	nonce, err := e.newNonce()
	if err != nil {
		e.st.DropAuth++ // no nonce, no answer: the peer retries until its timeout
		return
	}
	c := newConn(e, e.newID(), h.Node, false, now)
	c.nonce0, c.authMode = nonce, max(e.modeFor(h.Node), AuthMode(h.Auth))
	if e.keyed() {
		c.auth = newConnAuth(e.cfg.Auth.Key, c.authMode, e.cfg.Paths, false,
			authSide{h.Nonce, h.Node, h.Src}, authSide{nonce, e.cfg.NodeID, uint64(c.id)})
	}
	c.peerNonce = h.Nonce
	c.open(&h, now)
	c.helloAck, c.helloTries, c.accepted, c.helloEcho = true, path, key, h.SentAt
	e.addConn(c)
	e.accepted[key] = c
	e.emit(Event{Kind: EventAccepted, Conn: c.id, Peer: c.peer})
}
