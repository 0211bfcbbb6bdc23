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
// delay above its minimum) over its last span of at least the interval
// and its RTT (queueSpan) is kept, and the largest of those is the
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
			q := c.qMin.end(now, max(interval, c.srtt()))
			if c.active {
				standing = max(standing, q)
			}
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

// inboundDelay notes the relative one-way delay owd of a DATA datagram of
// size bytes that arrived at now, for the rate share (queueSpan), if it
// is of the connection's largest datagrams (within 1/sizeClass; a larger
// one starts the minimum anew): a datagram's delay includes its
// serialisation at the links, which a minimum set by a smaller one reads
// as queueing. At a 200 Mbit/s link a datagram of 9000 bytes takes 360 µs
// more than a message's short last piece, 18 delay targets (20 µs): with
// the minimum of such a piece, every full datagram read as a standing
// queue and the share stood at two thirds of the capacity
// (TestTrainsOnALongPath: 72 % of the target rate reached, against 99 %).
func (c *conn) inboundDelay(owd time.Duration, size int, now time.Duration) {
	switch {
	case size > c.rxBig:
		if size-size/sizeClass > c.rxBig {
			c.owdMin = winMin{}
		}
		c.rxBig = size
	case size < c.rxBig-c.rxBig/sizeClass:
		return
	}
	c.owdMin.sample(owd, now, floorWindow)
	c.qMin.sample(owd - c.owdMin.value())
}

// sizeClass: datagrams within 1/sizeClass of a connection's largest are
// of its size for the inbound delay (inboundDelay): 9000 against 8438
// bytes differ by 22 µs at 200 Mbit/s.
const sizeClass = 16

// queueSpan is the queueing delay a connection's DATA met on its way in,
// for the rate share: the smallest over spans of at least a share
// interval and the connection's smoothed RTT. A standing queue holds every
// packet of a round trip, the fastest included; within less than a round
// trip the smallest may be one packet's, which met the links' jitter or
// waited behind another of its own train or burst. A sender at 25 MB/s
// of 9000-byte datagrams has one packet or none in a share interval of
// 250 µs (SenderIdle/4), so one packet's delay was the interval's
// smallest: 50 µs of jitter on the links swung the share between the
// capacity and two thirds of it from one ACK to the next, the sender's
// trains (train.go) between two datagrams and one (TestTrainsOnALongPath:
// 61 % of the target rate reached, against 99 %).
type queueSpan struct {
	cur  time.Duration // the smallest in the running span; -1: none
	from time.Duration // when the running span began
	last time.Duration // the smallest of the last whole span; -1: none
}

// sample notes a packet that met queueing delay q.
func (s *queueSpan) sample(q time.Duration) {
	if s.cur < 0 || q < s.cur {
		s.cur = q
	}
}

// end returns the smallest delay of the last whole span at now, ending the
// running one first if it lasted at least span.
func (s *queueSpan) end(now, span time.Duration) time.Duration {
	if now-s.from >= span {
		s.last, s.cur, s.from = s.cur, -1, now
	}
	return s.last
}
