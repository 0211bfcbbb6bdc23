package mrtransport

import (
	"time"

	"github.com/gocoll/gocoll/transport"
)

// Close fails every pending receive with transport.ErrClosed, lets the
// pending sends already under way drain, and fails the other pending
// sends with transport.ErrClosed. A send is under way if its message is
// in the core (one message per key at a time: the head of its key's
// queue, an eager send included); the sends queued behind it with its
// key go to the core in turn, in order, each completing only once the
// peer has acknowledged it (none is eager any more). Close waits up to
// Config.CloseLinger for the peers to acknowledge what was sent: these
// sends, the eager sends whose requests completed before Close, and
// control messages; it returns sooner when everything is acknowledged or
// a peer's connection ends (a peer gone fails its draining sends with an
// error that is transport.ErrClosed and names the cause; a peer's abort
// of an operation fails that operation's draining sends with one that is
// transport.ErrClosed and the *transport.RemoteAbortError). Whatever is
// left when the linger ends fails with transport.ErrClosed. With a
// negative CloseLinger nothing drains: every pending send fails at once.
// So a send completes without error only if its message was delivered,
// and the sends of one key that completed before Close are not followed
// by failures of the ones posted after them unless the linger ends first
// (see transport.Endpoint.Close). With nothing pending or unacknowledged,
// Close does not wait. Close then tells every peer (their requests with
// this rank fail with a *transport.PeerError, except sends this rank
// received in full, which the core's final ACK completes), closes the
// sockets and waits for the engine's goroutines to end; so it returns
// about CloseLinger after it began at the latest, plus the time the
// engine takes to stop. It is idempotent: a later Close waits for the
// first to end.
func (e *Endpoint) Close() error {
	e.stopSampler()
	e.eng.lock()
	first := !e.closed
	if first {
		e.closed, e.draining = true, e.cfg.CloseLinger >= 0
		close(e.closing)
		now := e.eng.now()
		for _, p := range e.peers {
			if p != nil {
				p.err = transport.ErrClosed
				e.withdrawPending(now, p, transport.ErrClosed)
			}
		}
		e.self.fail(func(*request) bool { return true }, transport.ErrClosed)
		e.eng.process(now)
	}
	e.eng.unlock()
	if !first {
		<-e.closeDone
		return nil
	}
	e.linger()
	e.eng.lock()
	e.draining = false // what the core still holds, and what follows it, fails
	now := e.eng.now()
	for _, p := range e.peers {
		if p != nil && p.conn != 0 {
			_ = e.eng.core.Close(now, p.conn)
		}
	}
	e.eng.process(now) // fails what is left and sends the final ACKs and CLOSEs
	for _, p := range e.peers {
		if p != nil {
			e.failQueued(now, p, transport.ErrClosed)
		}
	}
	e.eng.unlock()
	e.eng.stop()
	e.logEngine()
	if err := e.writeSamples(); err != nil {
		e.log.Warn(err.Error())
	}
	close(e.closeDone)
	return nil
}

// withdrawPending fails with err every request with p whose caller still
// waits, but for the send queues whose head is in the core while Close
// drains and the connection is up: those it marks draining. Each
// queue is withdrawn from its tail, so that no request behind a withdrawn
// head is handed to the core on the way. The caller holds eng.mu.
func (e *Endpoint) withdrawPending(now time.Duration, p *peer, err error) {
	var pending []*request
	for _, qs := range []map[msgKey]*queue{p.sends, p.recvs} {
		for _, q := range qs {
			if h := q.head(); e.draining && p.up && h != nil && h.isSend && h.state == stateInCore {
				q.draining = true
				continue
			}
			for i := len(q.reqs) - 1; i >= 0; i-- {
				if r := q.reqs[i]; !r.released {
					pending = append(pending, r)
				}
			}
		}
	}
	for _, r := range pending {
		e.withdraw(now, p, r, err)
	}
}

// lingerPoll is how often Close checks whether the peers have acknowledged
// everything sent.
const lingerPoll = 100 * time.Microsecond

// linger waits, up to Config.CloseLinger, until the core has no message
// queued or in flight on any connection. The caller does not hold eng.mu.
func (e *Endpoint) linger() {
	if e.cfg.CloseLinger < 0 {
		return
	}
	deadline := time.Now().Add(e.cfg.CloseLinger)
	for {
		e.eng.lock()
		idle := e.sendsSettled()
		e.eng.unlock()
		if idle || time.Now().After(deadline) {
			return
		}
		time.Sleep(lingerPoll)
	}
}

// sendsSettled reports whether no connection has a message queued or in
// flight, in the core or in a draining queue. The caller holds eng.mu.
func (e *Endpoint) sendsSettled() bool {
	for _, p := range e.peers {
		if p == nil || p.conn == 0 {
			continue
		}
		if p.up && len(p.sends) > 0 {
			return false // only draining queues are left (withdrawPending)
		}
		if st, _, ok := e.eng.core.ConnStats(p.conn, nil); ok && st.PendingSends > 0 {
			return false
		}
	}
	return true
}

// failQueued fails every request of p still queued. The caller holds
// eng.mu.
func (e *Endpoint) failQueued(now time.Duration, p *peer, err error) {
	for _, qs := range []map[msgKey]*queue{p.sends, p.recvs} {
		for k, q := range qs {
			for _, r := range q.reqs {
				r.complete(0, err)
			}
			delete(qs, k)
		}
	}
	e.nBlocked -= len(p.blocked)
	p.blocked = nil
}

// drains reports whether r is a send of a queue that Close lets go while
// it lingers (see Close): this endpoint is closing, not the connection,
// which is still up. The caller holds eng.mu.
func (e *Endpoint) drains(p *peer, r *request) bool {
	if !r.isSend || !e.draining || !p.up || p.err != transport.ErrClosed {
		return false
	}
	q := p.sends[r.key]
	return q != nil && q.draining
}
