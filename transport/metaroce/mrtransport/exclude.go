package mrtransport

import (
	"context"
	"errors"
	"fmt"
)

// ErrExcluded is wrapped by the error of a request with a peer that
// [Listener.ConnectExcept] left out: another transport reaches it.
var ErrExcluded = errors.New("not reached through MetaRoCE")

// Unconnected returns the ranks whose connection is not up: after a
// Connect that ended with its context, the ranks it did not reach.
func (l *Listener) Unconnected() []int { return l.ep.missing() }

// ConnectExcept is Connect without the ranks r where except[r] is true:
// they are not dialed, their connections are refused, one already made or
// being made is closed, and a request with them fails at once with an
// error wrapping ErrExcluded. It may follow a Connect, one that ended with
// its context (a probe of which peers answer) or one that returned the
// endpoint, which ConnectExcept then returns again; the connections to the
// other ranks are kept. A rank once excluded stays so. A caller that reaches the
// excluded ranks otherwise (the launcher falls back to TCP where UDP is
// blocked) must make sure each of them excludes this rank too.
func (l *Listener) ConnectExcept(ctx context.Context, peers []PeerAddr, except []bool) (*Endpoint, error) {
	e := l.ep
	if len(except) != e.cfg.Size {
		return nil, fmt.Errorf("mrtransport: %d exclusions for a world of %d", len(except), e.cfg.Size)
	}
	e.eng.lock()
	now := e.eng.now()
	for r, p := range e.peers {
		if p == nil || !except[r] || p.excluded {
			continue
		}
		p.excluded = true
		if p.conn != 0 {
			delete(e.byConn, p.conn)
			_ = e.eng.core.Close(now, p.conn)
			p.conn = 0
		}
		if p.up {
			p.up = false
			e.nUp--
		}
		p.err = fmt.Errorf("mrtransport: rank %d: %w", r, ErrExcluded)
		e.failQueued(now, p, p.err)
	}
	e.checkConnected()
	e.eng.process(now)
	e.eng.unlock()
	return l.Connect(ctx, peers)
}

// wanted is the number of peers Connect waits for. The caller holds eng.mu.
func (e *Endpoint) wanted() int {
	n := 0
	for _, p := range e.peers {
		if p != nil && !p.excluded {
			n++
		}
	}
	return n
}

// checkConnected closes e.connected once every wanted peer is up. The
// caller holds eng.mu.
func (e *Endpoint) checkConnected() {
	if e.nUp == e.wanted() && !e.isConnected() {
		close(e.connected)
	}
}
