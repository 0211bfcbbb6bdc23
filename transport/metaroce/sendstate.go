package metaroce

import "time"

// SendLimit names what holds a connection's data back at a moment
// (SendState.Limit). The message layer is asked first: data that it would
// not release is held by it whatever the windows say; data it would
// release is held by the first of the transmit rules pollData applies.
type SendLimit uint8

// The limits, in the order SendState looks for them.
const (
	// LimitIdle: nothing is posted and unsent (what was sent may still be
	// in flight).
	LimitIdle SendLimit = iota
	// LimitHandshake: the connection is not open, or the peer has not yet
	// confirmed it.
	LimitHandshake
	// LimitMsgWindow: the next message may not start: the peer's message
	// window (MsgSeq) is full.
	LimitMsgWindow
	// LimitCredit: every message with bytes left waits for credit (the
	// unconfirmed bytes the peer allows) or for its grant (the peer's
	// matching receive).
	LimitCredit
	// LimitDrain: the connection holds its DATA so that a bottleneck's
	// queue empties (drain.go).
	LimitDrain
	// LimitRate: the bytes in flight fill the window under the peer's
	// target rate (windowCap).
	LimitRate
	// LimitPaths: no path is usable (each is probing after a timeout, or
	// dead).
	LimitPaths
	// LimitWindow: no usable path has room in its congestion window.
	LimitWindow
	// LimitPace: the pacing clock has not reached the next datagram's
	// time.
	LimitPace
	// LimitReady: a DATA datagram may go now: the driver has not polled
	// it yet (a late timer, a busy or descheduled driver).
	LimitReady
)

var limitNames = [...]string{"idle", "handshake", "msgwindow", "credit", "drain", "rate", "paths", "window", "pace", "ready"}

// String returns the limit's short name: "window", "pace", ...
func (l SendLimit) String() string {
	if int(l) < len(limitNames) {
		return limitNames[l]
	}
	return "unknown"
}

// SendState is a connection's sending side at one moment (see
// Endpoint.SendState): what is posted, what is in flight, the windows and
// rates that bound it, and what holds it.
type SendState struct {
	Limit SendLimit
	// Unsent is the message bytes posted and not yet sent once; Resends
	// the pieces waiting to be sent again.
	Unsent  int64
	Resends int
	// Inflight is the datagram bytes in flight on every path; Cwnd the
	// usable paths' congestion windows summed, SlowStart how many of
	// those paths are in slow start.
	Inflight, Cwnd, SlowStart int
	// WindowCap is the window under the peer's target rate (0: none).
	WindowCap int
	// PaceRate is the pacing rate in bytes/s (0: none); PaceWait how long
	// until pacing lets the next datagram go (0: now).
	PaceRate float64
	PaceWait time.Duration
	// PeerRate is the target rate the peer last gave (bytes/s, 0: none);
	// Credit the unconfirmed bytes this side may still send.
	PeerRate, Credit int64
}

// SendState returns connection id's sending state at now, or false for an
// unknown connection. It changes nothing: a driver may sample it as often
// as it likes (mrtransport's send sampler does, every millisecond).
func (e *Endpoint) SendState(now time.Duration, id ConnID) (SendState, bool) {
	c := e.conns[id]
	if c == nil {
		return SendState{}, false
	}
	s := SendState{
		Resends: c.snd.queuedResends(), Inflight: c.inflight(), WindowCap: c.windowCap(),
		PeerRate: int64(c.peerRate), Credit: int64(c.snd.creditLimit - c.snd.creditUsed),
	}
	for _, p := range c.paths {
		if p.usable() {
			s.Cwnd += p.win.cwnd
			if p.win.cwnd < p.win.ssthresh {
				s.SlowStart++
			}
		}
	}
	s.PaceRate, _ = c.paceRate()
	s.PaceWait = max(c.paceAt-now, 0)
	var held SendLimit
	s.Unsent, held = c.snd.peek()
	s.Limit = c.sendLimit(now, s.Resends > 0, held)
	return s, true
}

// sendLimit is SendState's Limit: held is the message layer's answer when
// it has nothing to release and no resend waits (LimitIdle if nothing
// is posted).
func (c *conn) sendLimit(now time.Duration, resend bool, held SendLimit) SendLimit {
	switch {
	case !resend && held != LimitReady:
		return held
	case c.phase != phaseOpen || !c.confirmed:
		return LimitHandshake
	case now < c.drainUntil:
		return LimitDrain
	}
	hold, _ := c.dataHold(now, true)
	return hold
}

// peek returns the message bytes posted and not yet sent once, and
// whether newPiece would find a piece (LimitReady), or what holds every
// message back (LimitMsgWindow, LimitCredit; LimitIdle: nothing is
// left to send). It changes nothing.
func (s *sender) peek() (int64, SendLimit) {
	var unsent int64
	held, ready := LimitIdle, false
	for _, m := range s.order {
		if m.allSent || m.aborted {
			continue
		}
		unsent += int64(m.size - m.next)
		if ready || held == LimitMsgWindow {
			continue
		}
		n := min(uint64(s.chunk), m.size-m.next)
		switch {
		case !m.started && s.nextSeq >= s.peerFinBase+s.peerWindow:
			held = LimitMsgWindow // later messages start after this one
		case m.granted, s.creditUsed+n <= s.creditLimit, !m.started:
			ready = true
		default:
			held = LimitCredit
		}
	}
	if ready {
		return unsent, LimitReady
	}
	return unsent, held
}
