package metaroce

import "time"

// A connection that keeps its small windows full drains (sends no DATA)
// for three round trips every drainEvery (or drainRTTs such pauses, if
// longer), and joins a drain
// another sender began when one of its paths' RTT falls below its
// minimum by half a delay target (the queue it took for part of its base
// is emptying), as BBR's ProbeRTT, so that connections that share a
// bottleneck drain it together and every path sees its true base RTT
// again. Without it, a sender whose first samples met a queue others had
// built takes that queue for its base, and many such senders of a few
// packets each (an incast of 6 connections of 8 paths through one 400
// Mbit/s link: 48 paths in a bandwidth-delay product of 23 packets) keep
// it standing at the depth they first saw, without any delay signal,
// until a burst overflows the buffer (the lab: a 14-18 ms queue standing
// in a 20 ms buffer, 3.8 % drops).
const (
	drainEvery = 2 * time.Second
	drainRTTs  = 64
	// drainMax bounds the pause of one drain.
	drainMax = 250 * time.Millisecond
)

// drainSpan returns how long a drain of c pauses: three times the largest
// smoothed RTT of its usable paths (which includes the queue it drains),
// so that the other senders have a round trip to see the queue fall and
// join (fellBelow) while it still pauses, at most drainMax; and the time
// between drains.
func (c *conn) drainSpan() (pause, every time.Duration) {
	for _, p := range c.paths {
		if p.usable() && p.rtt.has {
			pause = max(pause, p.rtt.srtt)
		}
	}
	pause = min(drainPauseRTTs*pause, drainMax)
	return pause, max(drainEvery, drainRTTs*pause)
}

const drainPauseRTTs = 3

// needsDrain reports whether a drain can help c at now: at least half of
// its usable paths have a window under coupleBelow packets and at least
// half of it in flight (a path of a large window drains its own queue with
// its delay cuts, and a drain would cost it round trips of its rate for
// nothing: on a long fat path one path that a loss left small would stop
// the others' megabytes for 250 ms; a connection of small messages builds
// no queue, and a drain would only delay them), and none competes with a
// loss-based flow (which keeps the queue full whatever we do: a drain
// would only hand it our share).
func (c *conn) needsDrain(now time.Duration) bool {
	small, usable := 0, 0
	for _, p := range c.paths {
		if p.competingAt(now) {
			return false
		}
		if !p.usable() || !p.rtt.has {
			continue
		}
		usable++
		if p.win.cwnd < coupleBelow*p.win.mss && 2*p.inflight >= p.win.cwnd {
			small++
		}
	}
	return small > 0 && 2*small >= usable
}

// startDrain begins a drain at now if one can help (needsDrain), unless
// one ended less than half the time between drains ago (its own
// after-drain samples, below the minimum, must not start another).
func (c *conn) startDrain(now time.Duration) {
	pause, every := c.drainSpan()
	if pause <= 0 || c.armDrain(now, every) || now < c.drainCool {
		return
	}
	if !c.needsDrain(now) {
		c.drainNext = now + every
		return
	}
	c.drainUntil = now + pause
	c.drainNext = now + every
	c.drainCool = c.drainUntil + every/2
	c.st.Drains++
}

// armDrain times the connection's first drain, the time between drains
// after it first has data to send, if not yet done, and reports whether it
// did: no drain starts before it, joined or not (while the paths' minima
// are a few samples old, any sample may fall below them, and a pause in
// the first seconds would blur the rates by which mrtransport's early
// re-pick tells which paths share a link).
func (c *conn) armDrain(now, every time.Duration) bool {
	if c.drainNext != 0 || every <= 0 {
		return c.drainNext == 0
	}
	c.drainNext = now + every
	c.drainCool = c.drainNext
	return true
}

// draining reports whether the connection holds its DATA at now for a
// drain, starting the one due if it has data to send. A connection that
// comes back with nothing in flight after sending nothing for at least a
// drain's pause has just drained (an application's pause: a collective's
// calls, or its phases off this link, leave it idle), so its next drain
// is due the time between drains later: a timed drain would hold its data
// a pause longer while the queue it drains is most likely empty
// (mrtransport's TestWANSimHierarchical: every 2 s, one call of a 16 MiB
// AllReduce lost ~20 ms, ~10 %, to a drain of all 8 WAN connections at once
// mid-call, although 20 ms gaps between the calls left the links idle).
func (c *conn) draining(now time.Duration) bool {
	pause, every := c.drainSpan()
	if c.armDrain(now, every) {
		return false
	}
	if pause > 0 && c.lastSend > 0 && now-c.lastSend >= pause && c.inflight() == 0 {
		c.drainNext = max(c.drainNext, now+every)
	}
	if now >= c.drainNext {
		c.startDrain(now)
	}
	return now < c.drainUntil
}

// fellBelow reports whether a fabric RTT sample s (path.fab) shows the queue the path's
// minimum stands on emptying: below the minimum by half the delay target.
func (p *path) fellBelow(s time.Duration, cfg *Config) bool {
	return p.fab.has && s < p.fab.min-p.delayTarget(cfg)/2
}
