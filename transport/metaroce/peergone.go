package metaroce

import "time"

// PeerGoneGrace is how long after HandlePeerGone the peer's connections
// fail. A peer that closes gracefully sends CLOSE before it closes its
// sockets, but the CLOSE may still be on its way, or queued behind the
// error: Linux reports a socket's pending error before the datagrams
// already queued, and the CLOSE may have come on another path's socket,
// read by another goroutine that a busy host has not run yet. A CLOSE
// within the grace ends the connection as a close (ErrPeerClosed) rather
// than as ErrPeerGone. The grace spans many of a scheduler's time slices
// (at 50 ms, about 1 in 450 graceful closes under a loaded 2-core test
// machine was reported as ErrPeerGone) and is small beside
// Config.IdleTimeout, which a dead peer took to notice before.
const PeerGoneGrace = 250 * time.Millisecond

// HandlePeerGone tells the endpoint that the network reported a socket of
// node peer closed: a datagram sent to it was answered by an ICMP port
// unreachable, so the process that had the socket is gone (a process that
// closes its endpoint gracefully sends CLOSE first). Every open connection
// to peer fails PeerGoneGrace later, unless it ends before: its pending
// and later operations fail with ErrPeerGone and EventClosed reports
// ErrPeerGone; no CLOSE is sent, since nothing would read it. Another
// report during the grace does not extend it.
//
// A connection still setting up (its HELLO not answered yet) is left to
// its handshake, which retries until Config.IdleTimeout: at start-up a
// peer's socket may not be open yet. A report may also be stale: the
// network's answer to a datagram sent before the peer's socket opened (a
// late starter), read only after the connection was set up. So the report
// probes the peer on every path at once, and any packet heard from the
// peer after it (a dead process sends none) cancels it: the connection
// goes on, and a later report starts a new grace. HandlePeerGone reports
// whether peer had an open connection. Like every input, it is followed by
// polling (PollTransmit, PollEvent, NextTimeout).
func (e *Endpoint) HandlePeerGone(now time.Duration, peer uint64) bool {
	found := false
	for _, c := range e.order {
		if c.peer != peer || c.phase != phaseOpen {
			continue
		}
		found = true
		if c.goneAt == 0 {
			c.goneAt, c.timerOK = now+PeerGoneGrace, false
			for i := range c.paths {
				c.dueProbe(i)
			}
		}
	}
	return found
}
