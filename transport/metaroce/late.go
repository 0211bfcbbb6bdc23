package metaroce

import "time"

// lateTimer is what an Endpoint knows of its own punctuality: the earliest
// timer NextTimeout last gave its driver, which the driver is to honour by
// calling HandleTimeout then.
type lateTimer struct {
	due time.Duration
	ok  bool // due is set and not yet caught up with
	// ran is the time of the last input: the endpoint ran then, and a
	// stall begins no earlier.
	ran time.Duration
	// from and to bound the last stall catchUp credited: the endpoint
	// was not running from its earliest timer (plus lateSlack), or its
	// last input if later, to the input that came late (see ownWait).
	from, to time.Duration
}

// Lateness an endpoint takes as ordinary timer jitter, not as time it was
// not running: up to lateSlackMax, and never more than PeerTimeout/
// lateSlackDiv (so that a short PeerTimeout still forgives a stall of a
// good part of it). A timer runs a few tens of microseconds late on a
// quiet machine and a few milliseconds late on a busy one; the stalls that
// made live peers look silent (a loaded machine leaving processes
// unscheduled) last hundreds of milliseconds to seconds.
const (
	lateSlackMax = 10 * time.Millisecond
	lateSlackDiv = 32
)

// lateSlack returns the lateness catchUp does not credit.
func (e *Endpoint) lateSlack() time.Duration {
	return min(lateSlackMax, e.cfg.PeerTimeout/lateSlackDiv)
}

// catchUp runs first in every input at now (a datagram, a timer). An
// endpoint that comes to its earliest timer late was not running in the
// meantime: its process went unscheduled (a loaded or frozen machine), so
// it could neither hear the peers nor answer them, and the datagrams they
// sent may still wait unread in its sockets. That time does not count as
// the peers' silence: each connection's last-heard time (and the start of
// its wait) moves on by the lateness beyond lateSlack (ordinary jitter
// credits nothing, so that a run of slightly late timers cannot put off a
// dead peer's timeout), at most to now, so PeerTimeout and IdleTimeout
// measure only time this endpoint was there to listen. A peer that is
// really gone is still found, later by as much as this endpoint was late.
// The lateness counts from the timer's due time or from the last input,
// whichever is later: the endpoint ran at that input, so a timer still
// due when it ran again (NextTimeout between two inputs of the same thaw)
// is not a second stall (a sender stopped for 1 s had 1.82 s credited;
// TestStallCreditedOnce). EndpointStats.LateRuns and Late count the
// credited runs and time.
func (e *Endpoint) catchUp(now time.Duration) {
	d := e.Late(now)
	e.late.ran = max(e.late.ran, now)
	if !e.late.ok || now <= e.late.due {
		return
	}
	e.late.ok = false
	if d <= 0 {
		return
	}
	e.late.from, e.late.to = now-d, now
	e.st.LateRuns++
	e.st.Late += d
	for _, c := range e.order {
		c.lastRecv = min(now, c.lastRecv+d)
		c.waitFrom = min(now, c.waitFrom+d)
		c.timerOK = false
	}
}

// Late returns how much later than its earliest timer (the one
// NextTimeout last returned) now is, beyond the lateness taken as jitter
// (lateSlack), and than its last input, or 0: the time the endpoint was
// not running. It changes
// nothing (the next input credits it, see catchUp). A driver that finds
// itself late reads what its sockets hold before HandleTimeout: the ACKs
// and probes its peers sent while it was not running wait there, and a
// retransmission timeout or a peer's silence must be judged on what was
// heard, not on what was read.
func (e *Endpoint) Late(now time.Duration) time.Duration {
	if !e.late.ok || now <= e.late.due {
		return 0
	}
	return max(now-max(e.late.due+e.lateSlack(), e.late.ran), 0)
}

// noteDue records the earliest timer NextTimeout returns.
func (e *Endpoint) noteDue(t time.Duration, ok bool) {
	e.late.due, e.late.ok = t, ok
}

// ownWait returns how much of the time from at (a datagram's arrival) to
// now (its input) falls in the last stall catchUp credited: time the
// datagram waited in a socket because this endpoint was not running. It
// is no part of the path's round trip: an ACK read after a stall of a
// second would otherwise be sampled as an RTT of a second, and the
// smoothed RTT and its deviation (the RTO, the pacing rate cwnd/srtt)
// would take many round trips to forget it, so that the sender, running
// again, sent at a small fraction of its window for as long (in virtual
// time, a 16 MiB transfer over 4 paths of 100 Mbit/s whose sender
// stopped for 1 s took 300 ms longer than the stall; freeze_test.go).
// Lateness within lateSlack, which credits nothing, stays in the sample:
// reads late by a scheduler's jitter are part of the loop a timer must
// cover (arrival_test.go).
func (e *Endpoint) ownWait(at, now time.Duration) time.Duration {
	return max(0, min(now, e.late.to)-max(at, e.late.from))
}

// SilenceDue reports whether HandleTimeout at now would fail a connection
// for its peer's silence (PeerTimeout or IdleTimeout). A driver whose
// readers may not have been scheduled (a loaded machine) reads what its
// sockets already hold first, without waiting, and hands it to
// HandleDatagram: those datagrams were sent, and heard in time, even if no
// reader had run to read them. Like every input, it first credits the
// time the endpoint came late to its timers (see PeerTimeout); it changes
// nothing else.
func (e *Endpoint) SilenceDue(now time.Duration) bool {
	e.catchUp(now)
	for _, c := range e.order {
		if c.goneAt != 0 && now >= c.goneAt {
			continue // gone by the network's report, not by silence
		}
		if now-c.lastRecv >= c.cfg.IdleTimeout {
			return true
		}
		if at, ok := c.peerTimeoutAt(); ok && now >= at {
			return true
		}
	}
	return false
}
