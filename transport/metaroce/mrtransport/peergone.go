package mrtransport

import (
	"errors"
	"net/netip"
	"syscall"
	"time"
)

// A peer process that dies without closing its endpoint (kill -9) sends
// no CLOSE, but its sockets close with it: the next datagram to one of
// them is answered by an ICMP port unreachable. A socket that reads those
// errors (errorQueue) lets the engine tell the core at once
// (metaroce.Endpoint.HandlePeerGone), rather than at the idle timeout.
// Linux reports such an error in two ways: once as the socket's pending
// error, ECONNREFUSED, to the next read or write on the socket, whichever
// comes first; and as an entry in the socket's error queue, which stays
// (in the receive buffer's space) until read. So the engine reads the
// queue after every read error, and after every write that failed or
// that the socket says may have met an error unseen.

// errorQueue is a PathSocket that reads the ICMP errors the kernel queues
// about the datagrams it sent: the udpio socket on Linux.
type errorQueue interface {
	// errorsPending reports, cheaply, whether errors may be queued that no
	// read or write reported.
	errorsPending() bool
	// drainErrors reads the queued errors without waiting, appends to dst
	// the destinations that answered port unreachable and returns it with
	// the number of errors read in all.
	drainErrors(dst []netip.AddrPort) ([]netip.AddrPort, int)
}

func (u *udpioSocket) errorsPending() bool { return u.s.ErrorsPending() }

func (u *udpioSocket) drainErrors(dst []netip.AddrPort) ([]netip.AddrPort, int) {
	before := len(dst)
	dst, other, _ := u.s.DrainErrors(dst) // an error means closed: nothing to read
	return dst, len(dst) - before + other
}

// refusedRetries is how many times a datagram is written again after its
// write failed with ECONNREFUSED, the pending error of an earlier
// datagram, before it is dropped like one the socket refused.
const refusedRetries = 3

// isRefused reports whether a read or write failed with ECONNREFUSED: the
// socket's pending error, an earlier datagram's port unreachable, not a
// failure of this call's datagrams.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// drainErrors reads the error queue of socket s, if it has one, and
// appends the destinations that answered port unreachable to dst. It
// returns dst and the number of errors read. The caller does not hold mu.
func (e *engine) drainErrors(s PathSocket, dst []netip.AddrPort) ([]netip.AddrPort, int) {
	q, ok := s.(errorQueue)
	if !ok {
		return dst, 0
	}
	before := len(dst)
	dst, n := q.drainErrors(dst)
	refused := len(dst) - before
	e.st.portUnreachable.Add(int64(refused))
	e.st.errQueueOther.Add(int64(n - refused))
	return dst, n
}

// drainIfPending drains s's error queue into dst, as drainErrors, if
// the last read or write on it failed or the socket may have met an error
// unseen; otherwise it costs no system call. The caller does not hold mu.
func (e *engine) drainIfPending(s PathSocket, failed bool, dst []netip.AddrPort) []netip.AddrPort {
	if q, ok := s.(errorQueue); ok && (failed || q.errorsPending()) {
		dst, _ = e.drainErrors(s, dst)
	}
	return dst
}

// peersGone tells the core about each peer address in refused, one that
// answered port unreachable: its peer, if it has an open connection, is
// gone. The caller holds mu and processes the core's output next.
func (e *engine) peersGone(now time.Duration, refused []netip.AddrPort) {
	for _, a := range refused {
		if node, ok := e.nodeAt(a); ok && e.core.HandlePeerGone(now, node) {
			e.st.peerGone.Add(1)
		} else {
			e.st.unreachableIgnored.Add(1)
		}
	}
}

// handleRefused is peersGone as an input of its own, from a reader.
func (e *engine) handleRefused(refused []netip.AddrPort) {
	if len(refused) == 0 {
		return
	}
	e.lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	now := e.now()
	e.peersGone(now, refused)
	e.process(now)
	e.unlock()
}

// writtenRefused feeds the core the peer addresses the write of b found
// closed, if any, and reports whether it did. The caller holds mu.
func (e *engine) writtenRefused(b *txBatch) bool {
	if len(b.refused) == 0 || e.closed {
		return false
	}
	now := e.now()
	e.peersGone(now, b.refused)
	b.refused = b.refused[:0]
	e.process(now)
	return true
}

// nodeAt returns the node id (rank) of the peer whose path socket has
// address a. The caller holds eng.mu.
func (e *Endpoint) nodeAt(a netip.AddrPort) (uint64, bool) {
	a = unmapped(a)
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		for _, pa := range p.addrs {
			if unmapped(pa) == a {
				return uint64(p.rank), true
			}
		}
	}
	return 0, false
}

// unmapped returns a with an IPv4-mapped IPv6 address as plain IPv4.
func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
