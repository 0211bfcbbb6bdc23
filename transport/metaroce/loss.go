package metaroce

import "time"

// lossRounds counts a path's packets acknowledged and lost over its last
// two round trips (of the smoothed RTT each), so that a loss rate no random
// loss explains can be told apart from the scattered losses of a lossy
// link (see path.heavyLoss).
type lossRounds struct {
	at          time.Duration // start of the current round
	acked, lost [2]int        // current and previous round
}

// count adds acked and lost packets seen at now on a path of smoothed
// RTT srtt, starting a new round when the current one is srtt old.
func (l *lossRounds) count(acked, lost int, now, srtt time.Duration) {
	if now-l.at >= srtt {
		l.acked[1], l.lost[1] = l.acked[0], l.lost[0]
		l.acked[0], l.lost[0] = 0, 0
		if now-l.at >= 2*srtt {
			l.acked[1], l.lost[1] = 0, 0
		}
		l.at = now
	}
	l.acked[0] += acked
	l.lost[0] += lost
}

// heavy reports whether the last two rounds lost at least heavyLossMin
// packets and at least one in heavyLossDen of those resolved.
func (l *lossRounds) heavy() bool {
	lost := l.lost[0] + l.lost[1]
	return lost >= heavyLossMin && lost*heavyLossDen >= lost+l.acked[0]+l.acked[1]
}

// heavyLossMin and heavyLossDen set what heavy loss is: 3 packets and a
// fifth of those resolved in two round trips. A link of 5 % random loss
// shows it in about 2 % of a 6-packet window's double rounds; a buffer a
// sender overflows without seeing its queue (it came when the queue
// already stood, and took it for its path's base RTT) in every round.
const (
	heavyLossMin = 4
	heavyLossDen = 3
)

// lossCut returns whether a loss on the path is congestion and, if so,
// the factor to cut by (0: the loss signal's own): a loss while the path
// shows a queue (queueing) is a tail drop, cut as such; heavy loss with
// no queue in sight means the path's base RTT is wrong, taken with a queue
// that stood when it was measured (a latecomer to a full buffer, or a
// floor that forgot the empty queue after a standing one of floorWindow
// or more), and it cuts by half (minDelayCut): a loss-blind path would keep
// the buffer overflowing, and halving the windows of every path that
// overflows it drains the queue, so that the base is seen again and the
// delay signal takes over.
func (p *path) lossCut(cfg *Config, now time.Duration) (bool, float64) {
	cut, heavy, factor := false, false, 0.0
	switch {
	case p.queueing(cfg):
		cut = true
	case p.lr.heavy():
		cut, heavy = true, true
		if p.win.cwnd >= p.win.ssthresh {
			factor = minDelayCut
		}
	}
	if cut {
		p.ceil.onLoss(p.rtt.srtt, now, heavy)
	}
	return cut, factor
}

// lossCeiling is the RTT at which a path's buffer overflowed (the RTT
// when it last took a loss for congestion, smoothed over such losses), so
// that the delay signal can keep the path below it even when the path's
// base RTT is wrong (see lossCut): a path whose RTT stays within
// ceilingMargin of it is cut as for a delay signal. It is forgotten
// floorWindow after the last such loss.
type lossCeiling struct {
	rtt, at time.Duration
	heavy   bool // set by heavy loss since last forgotten
}

// onLoss notes a congestion loss at now on a path of smoothed RTT srtt.
func (c *lossCeiling) onLoss(srtt, now time.Duration, heavy bool) {
	if c.rtt == 0 || now-c.at >= floorWindow {
		c.rtt, c.heavy = srtt, false
	} else {
		c.rtt = (3*c.rtt + srtt) / 4
	}
	c.at = now
	c.heavy = c.heavy || heavy
}

// near reports whether rtt is within the margin of the ceiling at now:
// an eighth of the ceiling, at least the delay target.
func (c *lossCeiling) near(rtt, target, now time.Duration) bool {
	if c.rtt == 0 || now-c.at >= floorWindow {
		return false
	}
	return rtt > c.rtt-max(target, c.rtt/ceilingMargin)
}

const ceilingMargin = 8
