package metaroce

import "time"

// rttEstimator keeps a path's smoothed RTT, its mean deviation and its
// minimum, in the manner of RFC 6298. The minimum is that of the current
// and the previous minWindow, so that a path whose delay rose (a longer
// route) has its new base within two windows, instead of the rise being
// taken for queueing for ever.
type rttEstimator struct {
	srtt, rttvar, min, latest time.Duration
	minCur, minPrev, winAt    time.Duration
	// floor is the minimum over floorWindow windows: the path's base RTT
	// even under a queue that stands for longer than minWindow (other flows
	// keep it full), against which a loss is judged congestion.
	floor winMin
	// recent is the minimum of the last half to whole smoothed RTT: above
	// the minimum, a queue that stood that long, not the passing burst of
	// a round of slow start or the ACK of a slower path.
	recent winMin
	// peak is the highest excess of srtt over the floor over the last
	// one to two floorWindows: the deepest queue the path has shown.
	peak winMax
	// scatter is the smoothed difference between successive samples
	// (gain 1/8): per-packet jitter (a host's scheduling, a link's
	// retries) moves each sample by up to its size, where a queue, however
	// deep, moves successive samples by about a packet's serialisation
	// time; so a standing or rising queue leaves it low.
	scatter time.Duration
	has     bool // a sample was taken (seeds do not count)
}

// minWindow is the length of the windows of a path's RTT and one-way
// delay minima (see rttEstimator and owdTracker).
const minWindow = 500 * time.Millisecond

// floorWindow is the length of the windows of the long minima (the
// floors), which forget a lower base only after 1 to 2 of them: a route
// that got longer is taken for a standing queue by the loss classifier
// (path.queueing) for that long, not by the delay signal.
const floorWindow = 5 * time.Second

// winMin is the minimum of a series over the current and the previous
// window of a fixed length.
type winMin struct {
	cur, prev, at time.Duration
	seen          bool
}

// sample folds in v seen at now, with windows of length w.
func (m *winMin) sample(v, now, w time.Duration) {
	switch {
	case !m.seen:
		m.cur, m.prev, m.at, m.seen = v, v, now, true
	case now-m.at >= w:
		m.prev, m.cur, m.at = m.cur, v, now
	}
	m.cur = min(m.cur, v)
}

// value returns the minimum of the two windows (0 before any sample).
func (m *winMin) value() time.Duration { return min(m.cur, m.prev) }

// winMax is the maximum of a series over the current and the previous
// window of a fixed length.
type winMax struct {
	cur, prev, at time.Duration
	seen          bool
}

// sample folds in v seen at now, with windows of length w.
func (m *winMax) sample(v, now, w time.Duration) {
	switch {
	case !m.seen:
		m.cur, m.prev, m.at, m.seen = v, v, now, true
	case now-m.at >= w:
		m.prev, m.cur, m.at = m.cur, v, now
	}
	m.cur = max(m.cur, v)
}

// value returns the maximum of the two windows (0 before any sample).
func (m *winMax) value() time.Duration { return max(m.cur, m.prev) }

func newRTT(initial time.Duration) rttEstimator {
	return rttEstimator{srtt: initial, rttvar: initial / 2}
}

// seed starts an estimator that has no sample yet from the handshake's
// round trip s, with a deviation of s/2 (RFC 6298's first sample), at
// least minVar: the first window of many connections can queue far
// longer than the handshake took. The RTO is then at least three times
// s, as QUIC's first probe timeout is three times the handshake's RTT.
func (r *rttEstimator) seed(s, minVar time.Duration) {
	if r.has || s <= 0 {
		return
	}
	r.srtt, r.rttvar = s, max(s/2, minVar)
}

// sample folds in one RTT measurement taken at now; non-positive samples
// are ignored.
func (r *rttEstimator) sample(s, now time.Duration) { r.sampleSpan(s, now, r.srtt) }

// sampleSpan is sample with the recent minimum over the last half to
// whole span instead of the estimator's own srtt: a fabric RTT's recent
// minimum spans half the full loop (path.fab), since the ACK clock sends
// in bursts a loop apart and a queue is one that stands longer than one.
func (r *rttEstimator) sampleSpan(s, now, span time.Duration) {
	if s <= 0 {
		return
	}
	r.floor.sample(s, now, floorWindow)
	r.recent.sample(s, now, span/2)
	if !r.has {
		r.srtt, r.rttvar, r.min, r.latest, r.has = s, s/2, s, s, true
		r.minCur, r.minPrev, r.winAt = s, s, now
		return
	}
	if now-r.winAt >= minWindow {
		r.minPrev, r.minCur, r.winAt = r.minCur, s, now
	}
	r.minCur = min(r.minCur, s)
	r.min = min(r.minCur, r.minPrev)
	r.scatter = (7*r.scatter + absDur(s-r.latest)) / 8
	r.latest = s
	r.rttvar = (3*r.rttvar + absDur(r.srtt-s)) / 4
	r.srtt = (7*r.srtt + s) / 8
	r.peak.sample(r.srtt-r.floor.value(), now, floorWindow)
}

// absDur returns |d|.
func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// rto returns the retransmission timeout before backoff: srtt + 4 rttvar
// (at least srtt/4, so that a path whose RTT has been steady for a while
// still allows a quarter of it for jitter) + the peer's ACK delay, and
// at least lo. It is never shorter than srtt + 4 rttvar: no bound
// (MinRTO, MaxRTO) ever makes a path time out within its RTT.
func (r *rttEstimator) rto(lo, ackDelay time.Duration) time.Duration {
	return max(r.srtt+max(4*r.rttvar, r.srtt/4)+ackDelay, lo)
}

// floorRTT returns the long minimum RTT (the floor), or the smoothed one
// before any sample.
func (r *rttEstimator) floorRTT() time.Duration {
	if r.has {
		return r.floor.value()
	}
	return r.srtt
}

// base returns the minimum RTT, or the smoothed one before any sample.
func (r *rttEstimator) base() time.Duration {
	if r.has {
		return r.min
	}
	return r.srtt
}

// owdTracker keeps a path's relative one-way delay: a packet's arrival on
// the receiver's clock less its send time on ours. The clocks' offset
// cancels in the excess over the minimum, which is the queueing on the
// way out, whichever path the ACK came back on. Its minimum, too, is that
// of the last two minWindows, which also keeps a drift between the two
// hosts' clocks from accumulating.
type owdTracker struct {
	latest, minCur, minPrev, winAt time.Duration
	floor                          winMin        // the long minimum, as rttEstimator's
	recent                         winMin        // the minimum of the last half to whole srtt
	smooth                         time.Duration // the excess over the floor, smoothed as srtt is
	peak                           winMax        // the highest smooth, as rttEstimator's
	seen                           bool
}

// sample folds in one one-way delay v seen at now on a path of smoothed
// RTT srtt.
func (o *owdTracker) sample(v, now, srtt time.Duration) {
	o.floor.sample(v, now, floorWindow)
	o.recent.sample(v, now, srtt/2)
	if !o.seen {
		o.latest, o.minCur, o.minPrev, o.winAt, o.seen = v, v, v, now, true
		return
	}
	if now-o.winAt >= minWindow {
		o.minPrev, o.minCur, o.winAt = o.minCur, v, now
	}
	o.minCur = min(o.minCur, v)
	o.latest = v
	o.smooth = (7*o.smooth + o.latest - o.floor.value()) / 8
	o.peak.sample(o.smooth, now, floorWindow)
}

// queue returns the recent one-way delay's excess over the minimum: the
// queue that stood over the last half to whole RTT.
func (o *owdTracker) queue() time.Duration {
	if !o.seen {
		return 0
	}
	return o.recent.value() - min(o.minCur, o.minPrev)
}
