package metaroce

// The receiver's rate share: the target rate each ACK gives a sender, the
// receive capacity shared among the senders heard from recently, less a
// part that drains a standing queue (share).

import (
	"time"
)

// markActive counts a connection that just delivered a DATA datagram of n
// bytes in the rate share.
func (e *Endpoint) markActive(c *conn, n int) {
	e.arrived += int64(n)
	if !c.active {
		c.active = true
		e.nActive++
	}
}

// share returns the rate share of one active sender: the receive capacity
// divided by the number of senders heard from within SenderIdle, less a
// part that drains a queue standing in front of this receiver. 0 means no
// limit.
//
// A standing queue is measured as in CoDel: in each interval of
// SenderIdle/4, each sender's smallest queueing delay (relative one-way
// delay above its minimum) is kept, and the largest of those is the
// standing queue q. The next interval hands out the capacity times
// 1 - (q - DelayTarget)/(4 intervals), at least half of it, so a standing
// queue drains with a time constant of about four intervals.
func (e *Endpoint) share(now time.Duration) uint64 {
	if e.cfg.RecvCapacity < 0 {
		return 0
	}
	if now >= e.recount {
		interval := e.cfg.SenderIdle / 4
		elapsed := now - e.recount + interval
		e.recount = now + interval
		var standing time.Duration
		for _, c := range e.order {
			if c.active && now-c.lastData > e.cfg.SenderIdle {
				c.active = false
				e.nActive--
			}
			if c.active {
				standing = max(standing, c.qMin)
			}
			c.qMin = -1
		}
		excess := float64(standing-e.cfg.DelayTarget) / float64(4*interval)
		e.drain = min(max(excess, 0), 0.5)
		if excess > 0 && e.nActive >= 2 && elapsed > 0 {
			rate := float64(e.arrived-e.arrivedAt) / elapsed.Seconds()
			e.measured = max(e.measured, int64(rate))
		}
		e.arrivedAt = e.arrived
	}
	e.st.ActiveSenders = e.nActive
	e.st.RecvCapacity = e.cfg.RecvCapacity
	if e.st.RecvCapacity == 0 {
		e.st.RecvCapacity = e.measured
	}
	if e.st.RecvCapacity == 0 {
		return 0
	}
	capacity := float64(e.st.RecvCapacity) * (1 - e.drain)
	return uint64(capacity / float64(max(e.nActive, 1)))
}
