package metaroce

import "time"

// lateTimer is what an Endpoint knows of its own punctuality: the earliest
// timer NextTimeout last gave its driver, which the driver is to honour by
// calling HandleTimeout then.
type lateTimer struct {
	due time.Duration
	ok  bool // due is set and not yet caught up with
}

// catchUp runs first in every input at now (a datagram, a timer). An
// endpoint that comes to its earliest timer late was not running in the
// meantime: its process went unscheduled (a loaded or frozen machine), so
// it could neither hear the peers nor answer them, and the datagrams they
// sent may still wait unread in its sockets. That time does not count as
// the peers' silence: each connection's last-heard time (and the start of
// its wait) moves on by the lateness, at most to now, so PeerTimeout and
// IdleTimeout measure only time this endpoint was there to listen. A peer
// that is really gone is still found, later by as much as this endpoint
// was late. EndpointStats.LateRuns and Late count it.
func (e *Endpoint) catchUp(now time.Duration) {
	if !e.late.ok || now <= e.late.due {
		return
	}
	d := now - e.late.due
	e.late.ok = false
	e.st.LateRuns++
	e.st.Late += d
	for _, c := range e.order {
		c.lastRecv = min(now, c.lastRecv+d)
		c.waitFrom = min(now, c.waitFrom+d)
		c.timerOK = false
	}
}

// noteDue records the earliest timer NextTimeout returns.
func (e *Endpoint) noteDue(t time.Duration, ok bool) {
	e.late = lateTimer{due: t, ok: ok}
}
