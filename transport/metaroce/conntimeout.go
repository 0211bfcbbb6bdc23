package metaroce

import (
	"fmt"
	"time"
)

// onTimeout runs the connection's timers due at now. It returns an error
// if the connection must fail.
func (c *conn) onTimeout(now time.Duration) error {
	if c.goneAt != 0 && now >= c.goneAt {
		return ErrPeerGone
	}
	if now-c.lastRecv >= c.cfg.IdleTimeout {
		if c.authBad && c.phase == phaseConnecting {
			return fmt.Errorf("%w: peer %d answered with a proof of another job key (no valid answer within IdleTimeout)", ErrAuth, c.peer)
		}
		return ErrIdleTimeout
	}
	if c.phase != phaseOpen {
		return nil
	}
	if at, ok := c.peerTimeoutAt(); ok && now >= at {
		return &PeerTimeoutError{Silent: now - max(c.lastRecv, c.waitFrom), Paths: len(c.paths)}
	}
	for i, p := range c.paths {
		before := p.state
		silent := p.rtoAt != 0 && now >= p.rtoAt && c.silentFor(p, now)
		if p.onTimer(now, c.cfg, &c.snd, silent) {
			c.dueProbe(i)
		}
		c.notePath(p, before)
	}
	if now >= c.keepAt {
		every := c.keepaliveEvery()
		c.keepAt = now + every
		silent := now - max(c.lastRecv, c.waitFrom)
		switch {
		case c.waitingOnPeer() && silent >= c.cfg.PeerTimeout/2:
			for i := range c.paths {
				c.dueProbe(i) // the best path may be the one cut
			}
		case now-c.lastRecv >= every:
			c.probeBest()
		}
	}
	if c.blockAt != 0 && now >= c.blockAt {
		c.probeBest()
		c.blockAt = now + 2*c.rto()
	}
	return nil
}

// keepaliveEvery is how long the connection may hear nothing before it
// probes the peer: IdleTimeout/4, or, while something waits on the peer,
// IdleTimeout/16 or PeerTimeout/8 if shorter, so that a receiver whose
// peer died draws the network's report of its closed port (see
// HandlePeerGone) within a second or so by default, and a live peer is
// heard from several times per PeerTimeout. A live peer answers each
// probe.
func (c *conn) keepaliveEvery() time.Duration {
	if c.waitingOnPeer() {
		return min(c.cfg.IdleTimeout/16, c.cfg.PeerTimeout/8)
	}
	return c.cfg.IdleTimeout / 4
}

// waitingOnPeer reports whether something waits on the peer: a send
// queued or in flight, or a receive posted and not finished.
func (c *conn) waitingOnPeer() bool { return c.snd.count > 0 || c.rcv.waiting() }

// startWait is called before an operation is added at now: if nothing
// waited before, the peer's silence counts for PeerTimeout from now.
func (c *conn) startWait(now time.Duration) {
	if !c.waitingOnPeer() {
		c.waitFrom = now
	}
}

// peerTimeoutAt returns when the connection fails by PeerTimeout if the
// peer stays silent, or false if nothing waits on it or the idle timeout
// comes first.
func (c *conn) peerTimeoutAt() (time.Duration, bool) {
	if c.phase != phaseOpen || c.cfg.PeerTimeout >= c.cfg.IdleTimeout || !c.waitingOnPeer() {
		return 0, false
	}
	return c.silentFrom() + c.cfg.PeerTimeout, true
}

// quiet reports whether poll would surely send nothing at now, cheaply, so
// that an endpoint with many idle connections need not poll each.
func (c *conn) quiet(now time.Duration) bool {
	return c.phase == phaseOpen && c.confirmed && !c.helloAck && c.ctrlDue == 0 &&
		(c.ackAt == 0 || c.ackAt > now) && !c.snd.hasWork()
}

// rto returns the smallest retransmission timeout among usable paths.
func (c *conn) rto() time.Duration {
	t := c.cfg.MaxRTO
	for _, p := range c.paths {
		if p.usable() {
			t = min(t, p.baseRTO(c.cfg))
		}
	}
	return t
}

// nextTimeout returns the connection's earliest timer.
func (c *conn) nextTimeout() time.Duration {
	t := c.lastRecv + c.cfg.IdleTimeout
	consider := func(x time.Duration) {
		if x != 0 && x < t {
			t = x
		}
	}
	if c.phase == phaseConnecting || (!c.confirmed && c.snd.hasWork()) || c.helloAck {
		consider(c.helloAt)
	}
	consider(c.ackAt)
	consider(c.goneAt)
	if at, ok := c.peerTimeoutAt(); ok {
		consider(at)
	}
	if c.paceWait {
		consider(c.paceAt)
	}
	if c.drainWait {
		consider(c.drainUntil)
	}
	if c.phase == phaseOpen {
		consider(c.keepAt)
		consider(c.blockAt)
		for _, p := range c.paths {
			consider(p.nextTimer())
		}
	}
	return t
}
