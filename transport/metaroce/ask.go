package metaroce

import "time"

// A peer's silence counts for PeerTimeout from the first probe this
// endpoint sent it and heard no answer to, not from the last packet it
// heard, though from PeerTimeout/10 after that packet at the latest. A
// live peer answers a probe at once, whatever its application does, unless
// its own process is not running (a loaded host leaves it unscheduled for
// seconds at a time). Counted from the last packet heard, the silence of
// a peer that stopped just before this endpoint's next keepalive probe
// included the keepalive period that had passed with nothing to answer: a
// peer stopped for 1.8 s, less than the default PeerTimeout, was failed
// (TestNoPeerTimeoutAfterOneSidedStall, its first phase). Now a peer that
// stops is given PeerTimeout from the first probe it leaves unanswered, or
// PeerTimeout plus a tenth from the last packet heard if that comes first;
// a peer that is gone is failed within PeerTimeout plus a tenth of the last
// packet heard from it (TestPeerTimeoutWhenStallNeverEnds), sooner when a
// probe went out before (a retransmission's probe, a report that its port
// closed, a keepalive). No probe is added: the keepalive probes, every
// PeerTimeout/8 while something waits, are the ones that ask.

// askAfter bounds how long after the last packet heard the count of the
// peer's silence may begin: PeerTimeout/10.
func (c *conn) askAfter() time.Duration { return c.cfg.PeerTimeout / 10 }

// quietFrom is when the peer's silence began: the last packet heard, or
// the start of the wait if later.
func (c *conn) quietFrom() time.Duration { return max(c.lastRecv, c.waitFrom) }

// asked reports whether the connection has probed the peer since quietFrom.
func (c *conn) asked() bool { return c.askAt != 0 && c.askAt >= c.quietFrom() }

// noteAsk records a probe sent at now: the first since quietFrom may start
// the count of PeerTimeout.
func (c *conn) noteAsk(now time.Duration) {
	if !c.asked() {
		c.askAt = now
	}
}

// silentFrom is when the peer's silence counts from for PeerTimeout: the
// first probe since quietFrom, or askAfter after quietFrom if sooner.
func (c *conn) silentFrom() time.Duration {
	at := c.quietFrom() + c.askAfter()
	if c.asked() {
		at = min(at, c.askAt)
	}
	return at
}
