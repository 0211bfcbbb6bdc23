package tcp

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Matching: a message from peer p under tag goes to the oldest receive
// posted for (p, tag); if there is none, it waits in p.unexpected[tag] in
// arrival order until one is posted. Messages of one peer are matched in
// the order their headers arrive on the peer's first connection, which is
// the order they were sent.

// popPosted removes and returns the oldest live receive posted for tag.
func (p *peer) popPosted(tag transport.Tag) *request {
	list := p.posted[tag]
	for len(list) > 0 {
		r := list[0]
		list = popFront(list)
		if !r.isDone() {
			store(p.posted, &p.free.posted, tag, list)
			return r
		}
	}
	store(p.posted, &p.free.posted, tag, list)
	return nil
}

// matchUnexpectedLocked matches the new receive r with the oldest waiting
// message for its tag, if any, and reports whether it did.
func (e *Endpoint) matchUnexpectedLocked(p *peer, r *request) bool {
	list := p.unexpected[r.tag]
	for len(list) > 0 {
		u := list[0]
		list = popFront(list)
		store(p.unexpected, &p.free.unexp, r.tag, list)
		p.unexpCount--
		if u.send != nil && u.send.isDone() {
			continue // a self-send that was failed
		}
		e.deliverLocked(p, u, r)
		if u.arrived && u.send == nil && !u.rts {
			p.free.putRecord(u) // handled whole, under e.mu: nothing refers to it
		}
		return true
	}
	return false
}

// deliverLocked hands the waiting message u to receive r.
func (e *Endpoint) deliverLocked(p *peer, u *unexpected, r *request) {
	switch {
	case u.rts:
		e.acceptRTSLocked(p, r, u.msgID, u.size)
	case u.send != nil:
		copySelf(u.send, r)
	case u.size > len(r.buf):
		r.complete(0, truncatedError(u.size, len(r.buf)))
		e.consumeEagerLocked(p, u)
	case u.arrived:
		copy(r.buf, u.data)
		r.complete(u.size, nil)
		e.releaseLocked(p, u.size)
	default: // the body is still arriving: the reader delivers it
		r.expect(u.size)
		mustBegin(r)
		u.claim = r
	}
}

// consumeEagerLocked discards the eager message u, returning its credit
// now if its body has arrived, or on arrival otherwise.
func (e *Endpoint) consumeEagerLocked(p *peer, u *unexpected) {
	if u.arrived {
		e.releaseLocked(p, u.size)
		return
	}
	u.dropped = true
}

// sendSelfLocked matches a send to this rank itself with a posted receive,
// or leaves it waiting for one.
func (e *Endpoint) sendSelfLocked(p *peer, s *request) {
	if r := p.popPosted(s.tag); r != nil {
		copySelf(s, r)
		return
	}
	u := p.free.newRecord()
	u.size, u.send = len(s.buf), s
	push(p.unexpected, &p.free.unexp, s.tag, u)
	p.unexpCount++
}

// copySelf completes a send to oneself and its receive r.
func copySelf(s, r *request) {
	if len(s.buf) > len(r.buf) {
		err := truncatedError(len(s.buf), len(r.buf))
		r.complete(0, err)
		s.complete(0, err)
		return
	}
	n := copy(r.buf, s.buf)
	r.complete(n, nil)
	s.complete(n, nil)
}

// onData handles an eager message: its body goes straight into a posted
// receive's buffer, or into a new buffer counted against the peer's credit.
func (c *conn) onData(h header) error {
	e, p, n := c.ep, c.peer, int(h.body)
	e.mu.Lock()
	p.inFlight += int64(n)
	if p.inFlight > p.grant {
		e.mu.Unlock()
		return fmt.Errorf("%w: rank %d sent %d eager bytes beyond its credit of %d",
			errProtocol, p.rank, p.inFlight-p.grant, p.grant)
	}
	if e.opEndedLocked(h.tag.OpKey) {
		e.releaseLocked(p, n)
		e.mu.Unlock()
		return c.discard(n)
	}
	r := p.popPosted(h.tag)
	if r != nil && n > len(r.buf) {
		r.complete(0, truncatedError(n, len(r.buf)))
		e.releaseLocked(p, n)
		e.mu.Unlock()
		return c.discard(n)
	}
	if r != nil {
		r.expect(n)
		mustBegin(r)
		e.mu.Unlock()
		if err := c.readBody(r.buf[:n]); err != nil {
			r.end(0, false)
			return err
		}
		r.end(n, true)
		e.mu.Lock()
		e.releaseLocked(p, n)
		e.mu.Unlock()
		return nil
	}
	return c.stashData(h) // unlocks e.mu
}

// stashData reads an eager message that has no receive yet into a new
// buffer. It is called with e.mu held and unlocks it.
func (c *conn) stashData(h header) error {
	e, p, n := c.ep, c.peer, int(h.body)
	if err := c.countUnexpectedLocked(); err != nil {
		e.mu.Unlock()
		return err
	}
	u := p.free.newRecord()
	u.size = n
	push(p.unexpected, &p.free.unexp, h.tag, u)
	data := p.free.body(n)
	e.mu.Unlock()
	err := c.readBody(data)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		if u.claim != nil {
			u.claim.end(0, false)
		}
		return err
	}
	u.data, u.arrived = data, true
	switch {
	case u.claim != nil:
		copy(u.claim.buf, data)
		u.claim.end(n, true)
		u.claim, u.data = nil, nil
		e.releaseLocked(p, n)
	case u.dropped:
		u.data = nil
		e.releaseLocked(p, n)
	}
	return nil
}

// countUnexpectedLocked counts one more waiting message from the peer, or
// fails if the peer has too many.
func (c *conn) countUnexpectedLocked() error {
	p := c.peer
	if p.unexpCount >= c.ep.cfg.UnexpectedMessagesMax {
		return fmt.Errorf("%w: rank %d has more than %d messages waiting for receives",
			errProtocol, p.rank, c.ep.cfg.UnexpectedMessagesMax)
	}
	p.unexpCount++
	return nil
}

// onRTS handles a request to send a rendezvous message.
func (c *conn) onRTS(h header) error {
	e, p := c.ep, c.peer
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opEndedLocked(h.tag.OpKey) {
		c.enqueue(outFrame{h: header{kind: kindCTS, flags: ctsAborted, tag: h.tag, msgID: h.msgID}})
		return nil
	}
	if r := p.popPosted(h.tag); r != nil {
		e.acceptRTSLocked(p, r, h.msgID, int(h.arg))
		return nil
	}
	if err := c.countUnexpectedLocked(); err != nil {
		return err
	}
	u := p.free.newRecord()
	u.size, u.rts, u.msgID = int(h.arg), true, h.msgID
	push(p.unexpected, &p.free.unexp, h.tag, u)
	return nil
}

// acceptRTSLocked answers the rendezvous message msgID of size bytes, now
// matched with receive r, with a clear-to-send (or a refusal if r is too
// short).
func (e *Endpoint) acceptRTSLocked(p *peer, r *request, msgID uint64, size int) {
	r.mu.Lock()
	r.noReuse = true // p.rdvRecv names it
	r.mu.Unlock()
	cts := header{kind: kindCTS, tag: r.tag, msgID: msgID}
	switch {
	case size > len(r.buf):
		r.complete(0, truncatedError(size, len(r.buf)))
		cts.flags = ctsTruncated
	case size == 0:
		r.complete(0, nil)
	default:
		r.expect(size)
		p.rdvRecv[msgID] = &rdvReceive{req: r, size: size}
	}
	if p.failed == nil {
		p.conns[0].enqueue(outFrame{h: cts})
	}
}

// releaseLocked notes that n eager bytes of p no longer occupy memory here,
// and returns credit to p once a quarter of its grant has accumulated.
func (e *Endpoint) releaseLocked(p *peer, n int) {
	p.owed += int64(n)
	if p.owed == 0 || p.owed < max(1, p.grant/4) || p.failed != nil || e.closed {
		return
	}
	p.conns[0].enqueue(outFrame{h: header{kind: kindCredit, arg: uint64(p.owed)}})
	p.inFlight -= p.owed
	p.owed = 0
}

// onCredit adds credit returned by the peer.
func (c *conn) onCredit(h header) error {
	e, p := c.ep, c.peer
	e.mu.Lock()
	defer e.mu.Unlock()
	p.credit += int64(h.arg)
	if p.credit > p.peerGrant {
		return fmt.Errorf("%w: rank %d returned more credit than it granted", errProtocol, p.rank)
	}
	return nil
}

// refundCredit returns the credit of an eager send that was not sent.
func (e *Endpoint) refundCredit(p *peer, n int) {
	e.mu.Lock()
	p.credit += int64(n)
	e.mu.Unlock()
}

// mustBegin begins I/O on a receive just taken from the posted queue (or
// just posted) under Endpoint.mu. Such a receive cannot be completing:
// Cancel unhooks it under the same lock before it fails it.
func mustBegin(r *request) {
	if !r.begin() {
		panic("tcp: a posted receive was already completing")
	}
}
