package metaroce

import (
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// lossRounds counts a path's packets acknowledged and lost over its last
// two round trips (of the smoothed RTT each), and over its last few
// dozen with older rounds weighing less (steady), so that a loss rate no
// random loss explains can be told apart from the scattered losses of a
// lossy link (see path.lossCut).
type lossRounds struct {
	at          time.Duration // start of the current round
	acked, lost [2]int        // current and previous round
	// steadyAcked and steadyLost are the rounds before the current one,
	// each decayed by 1-1/steadyDecay per round since it ended.
	steadyAcked, steadyLost float64
}

// count adds acked and lost packets seen at now on a path of smoothed
// RTT srtt, starting a new round when the current one is srtt old.
func (l *lossRounds) count(acked, lost int, now, srtt time.Duration) {
	if now-l.at >= srtt {
		l.fold(int((now - l.at) / max(srtt, 1)))
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

// fold adds the current round, which ended rounds-1 empty rounds ago, to
// the steady counts, decaying them once per round.
func (l *lossRounds) fold(rounds int) {
	if rounds > steadyForget {
		l.steadyAcked, l.steadyLost = 0, 0
		return
	}
	const keep = 1 - 1.0/steadyDecay
	l.steadyAcked = l.steadyAcked*keep + float64(l.acked[0])
	l.steadyLost = l.steadyLost*keep + float64(l.lost[0])
	for range rounds - 1 {
		l.steadyAcked *= keep
		l.steadyLost *= keep
	}
}

// heavy reports whether the last two rounds lost at least heavyLossMin
// packets and at least one in heavyLossDen of those resolved, or the
// steady counts with the current round at least steadyLossMin packets
// and one in steadyLossDen.
func (l *lossRounds) heavy() bool {
	lost := l.lost[0] + l.lost[1]
	if lost >= heavyLossMin && lost*heavyLossDen >= lost+l.acked[0]+l.acked[1] {
		return true
	}
	sl := l.steadyLost + float64(l.lost[0])
	return sl >= steadyLossMin && sl*steadyLossDen >= sl+l.steadyAcked+float64(l.acked[0])
}

// heavyLossMin and heavyLossDen set what heavy loss is: 4 packets and a
// third of those resolved in two round trips. A link of 5 % random loss
// shows it in well under 1 % of a 6-packet window's double rounds; a buffer a
// sender overflows without seeing its queue (it came when the queue
// already stood, and took it for its path's base RTT) in every round.
//
// steadyLossMin and steadyLossDen set what heavy loss is over the steady
// counts (rounds decayed by 1/steadyDecay each, so about the last
// steadyDecay rounds): 12 packets and a sixth. A path that grows into a
// buffer it overflows loses what it sends beyond the bottleneck's rate,
// a steady 15-25 % of its packets in every round, which two rounds' third
// misses: in the staggered incast at gaps of 160-200 ms
// (TestIncastStaggered) a latecomer's path of 70 packets lost 22 % for a
// second and grew on, with 1-3 % of all packets dropped. Random loss of 5
// % does not reach it (over 0.2 M simulated rounds of 3 to 70 packets,
// none), of 10 % in 0.2 % of the rounds of 6 packets; steady loss of 20
// % does within 3 to 13 rounds of 6 to 20 packets.
const (
	heavyLossMin  = 4
	heavyLossDen  = 3
	steadyLossMin = 12
	steadyLossDen = 6
	steadyDecay   = 16
	// steadyForget is how many rounds without a packet resolved forget the
	// steady counts (decayed below a fiftieth).
	steadyForget = 64
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
		p.congestedAt = now
		p.ceil.onLoss(p.fab.srtt, now, heavy)
		if !heavy {
			p.noteCompetitor(cfg, now)
		}
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

// heavyAt reports whether a heavy loss set the ceiling that is still
// remembered at now (forgotten floorWindow after the last loss, as the
// ceiling itself).
func (c *lossCeiling) heavyAt(now time.Duration) bool {
	return c.heavy && now-c.at < floorWindow
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

// heavyCeiling reports whether the path's heavy loss ceiling (see
// lossCeiling.heavyAt) is to cut by delay at now. One that lies within the
// delay target and its margin of the floor cannot tell a queue: its delay
// rule holds at every RTT the path sees, the floor's own too, so it cuts
// every round trip. For a wrong floor (a latecomer's) that is right while the
// buffer keeps overflowing, and congestion losses keep coming; random
// losses that looked heavy (a few in two rounds of a small window, 5 %
// loss) pinned a path at one packet with it for floorWindow. So such a
// ceiling cuts only within heavyCeilingRTTs smoothed RTTs of the path's last
// congestion loss.
func (p *path) heavyCeiling(target, now time.Duration) bool {
	c := &p.ceil
	if !c.heavyAt(now) {
		return false
	}
	return c.rtt-max(target, c.rtt/ceilingMargin) > p.fab.floorRTT()+target || now-c.at < heavyCeilingRTTs*p.rtt.srtt
}

// heavyCeilingRTTs is how many smoothed RTTs after its last congestion loss a
// heavy loss ceiling near the floor still cuts (see path.heavyCeiling): 32
// kept the lab's LAN share with a loss-based flow (TestLANShareWithLossBased),
// 16 did not; 64 made the staggered incast's fragile gaps worse (160-170 ms:
// Jain 0.82-0.88), 128 leaves it as it was (drops and Jain within 0.2 %
// and 0.01 at gaps of 100-200 ms).
const heavyCeilingRTTs = 128

// competeHold is the least time a path stays competing (see
// path.competingAt) after the congestion loss that last showed a
// loss-based competitor, and competeRTTs the same in smoothed RTTs, if
// longer: a loss-based flow (CUBIC, Reno) overflows the buffer once per
// cycle of its window, which at 4 ms and 200 Mbit/s is a few tenths of a
// second and grows with its window.
const (
	competeHold = 2 * time.Second
	competeRTTs = 32
)

// holdFor is how long a change of the path's competing mode holds: into
// it (competeUntil), out of it (noCompeteUntil), and the span within
// which two standing-queue losses make it enter (noteCompetitor).
func (p *path) holdFor() time.Duration { return max(competeHold, competeRTTs*p.rtt.srtt) }

// stopCompeting ends the path's competing mode at now and keeps it out of
// it for a hold.
func (p *path) stopCompeting(now time.Duration) {
	p.competeUntil, p.noCompeteUntil = 0, now+p.holdFor()
}

// startCompeting puts the path into competing mode at now, for a hold,
// with fresh loss counts (countCompeting).
func (p *path) startCompeting(now time.Duration) {
	p.compAcked, p.compLost = 0, 0
	p.competeUntil = now + p.holdFor()
}

// noteCompetitor is called on a congestion loss that queueing judged a
// tail drop: if the path's minimum RTT stands above its floor by two
// delay targets (the queue did not drain for a minWindow, whatever the
// path's delay cuts), the buffer is kept full by a flow that yields to loss
// only, and the path competes with it until the hold is over (see
// competingAt).
func (p *path) noteCompetitor(cfg *Config, now time.Duration) {
	if now < p.noCompeteUntil || p.ceil.heavyAt(now) || !p.standing(cfg) {
		return
	}
	if !p.competingAt(now) {
		// Enter on the second such loss within two holds (and more than
		// an RTT apart): a latecomer's slow start overflows the buffer
		// once, a loss-based flow once per cycle of its window.
		first := p.standingLossAt
		switch {
		case first != 0 && now-first < p.rtt.srtt:
			return
		case first == 0 || now-first > 2*p.holdFor():
			p.standingLossAt = now
			return
		}
		p.standingLossAt = 0
		p.startCompeting(now)
		return
	}
	p.competeUntil = now + p.holdFor()
}

// competingAt reports whether the path competes with a loss-based flow
// at now: it then ignores the delay signal (a delay-based path yields its
// share to a flow that keeps the queue full: in the lab, a TCP flow on
// one of the 4 links took 163 % of its fair share) and cuts for loss only,
// its additive step one packet per window shared with the connection's
// other competing paths, as one TCP flow's (window.onAck).
func (p *path) competingAt(now time.Duration) bool { return now < p.competeUntil }

// countCompeting counts packets acked and lost while competing; a path
// that loses more than one in competeLossDen (at least competeLossMin)
// stops competing and may not again for a hold: a loss-based flow with a
// window of W packets loses about 1.5/W² of them, and a loss rate that
// high means many flows of a few packets (an incast of many paths, all
// delay-based but for a latecomer), whom a loss-based response would keep
// overflowing the buffer.
func (p *path) countCompeting(acked, lost int, now time.Duration) {
	if !p.competingAt(now) {
		return
	}
	p.compAcked += acked
	p.compLost += lost
	if p.compLost >= competeLossMin && p.compLost*competeLossDen > p.compAcked+p.compLost {
		p.stopCompeting(now)
	}
}

// competeSwing: a path stops competing when its minimum RTT stays within
// 1/competeSwing of the queue (ceiling less floor) of the ceiling.
const competeSwing = 4

const (
	competeLossMin = 8
	competeLossDen = 8
)

// competingPaths returns how many of c's paths compete with a
// loss-based flow at now, after letting any path whose ACK block is in a
// (the blocks of one ACK) start to compete: besides on losses
// (noteCompetitor), a path starts when it shows a standing queue while
// its rate (cwnd/srtt) is under 1/starvedBelow of the median of the
// connection's usable paths: a flow keeps its link's buffer full that the
// path's delay cuts do not drain, and the path starves (in the lab, its
// paths on a TCP flow's link carried a tenth of what the others did, and
// were hardly ever hit by a tail drop, which the flow's bursts take).
// Paths that share one bottleneck (an incast) starve together, and do not
// compete. It runs once per ACK, so that an ACK of k blocks costs
// O(k + paths), not O(k x paths).
func (c *conn) competingPaths(a *wire.Ack, now time.Duration) int {
	for i := range a.NumBlocks() {
		p := c.blockPath(a, i)
		if p == nil {
			continue
		}
		if !p.competingAt(now) && now >= p.noCompeteUntil && !p.ceil.heavyAt(now) && p.standing(c.cfg) && c.starved(p) {
			p.startCompeting(now)
		}
	}
	n := 0
	for _, q := range c.paths {
		if q.competingAt(now) {
			n++
		}
	}
	return n
}

// starvedBelow: a path whose rate is under 1/starvedBelow of the median
// of its connection's usable paths starves (see conn.competingPaths).
const starvedBelow = 8

// standing reports whether the path's minimum RTT stands above its floor
// by two delay targets: a queue that did not drain for a minWindow.
func (p *path) standing(cfg *Config) bool {
	return p.fab.has && p.fab.min-p.fab.floorRTT() > 2*p.delayTarget(cfg)
}

// starved reports whether p's rate is under 1/starvedBelow of the median
// rate of c's usable paths (at least 4 of them).
func (c *conn) starved(p *path) bool {
	var rates [256]float64
	n := 0
	for _, q := range c.paths {
		if q.usable() && q.rtt.has {
			rates[n] = float64(q.win.cwnd) / q.rtt.srtt.Seconds()
			n++
		}
	}
	if n < 4 || !p.rtt.has {
		return false
	}
	r := rates[:n]
	slices.Sort(r)
	mine := float64(p.win.cwnd) / p.rtt.srtt.Seconds()
	if mine*starvedBelow >= r[n/2] {
		return false
	}
	// A faster path of the same RTT likely shares the link: the queue
	// is the connection's own.
	target := p.delayTarget(c.cfg)
	for _, q := range c.paths {
		if q != p && q.usable() && q.rtt.has && float64(q.win.cwnd)/q.rtt.srtt.Seconds() > 2*mine &&
			q.rtt.srtt > p.rtt.srtt-target && q.rtt.srtt < p.rtt.srtt+target {
			return false
		}
	}
	return true
}
