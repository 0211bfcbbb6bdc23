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
	has                       bool // a sample was taken (seeds do not count)
}

// minWindow is the length of the windows of a path's RTT and one-way
// delay minima (see rttEstimator and owdTracker).
const minWindow = 500 * time.Millisecond

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
func (r *rttEstimator) sample(s, now time.Duration) {
	if s <= 0 {
		return
	}
	r.latest = s
	if !r.has {
		r.srtt, r.rttvar, r.min, r.has = s, s/2, s, true
		r.minCur, r.minPrev, r.winAt = s, s, now
		return
	}
	if now-r.winAt >= minWindow {
		r.minPrev, r.minCur, r.winAt = r.minCur, s, now
	}
	r.minCur = min(r.minCur, s)
	r.min = min(r.minCur, r.minPrev)
	dev := r.srtt - s
	if dev < 0 {
		dev = -dev
	}
	r.rttvar = (3*r.rttvar + dev) / 4
	r.srtt = (7*r.srtt + s) / 8
}

// rto returns the retransmission timeout before backoff: srtt + 4 rttvar
// (at least srtt/4, so that a path whose RTT has been steady for a while
// still allows a quarter of it for jitter) + the peer's ACK delay, and
// at least lo. It is never shorter than srtt + 4 rttvar: no bound
// (MinRTO, MaxRTO) ever makes a path time out within its RTT.
func (r *rttEstimator) rto(lo, ackDelay time.Duration) time.Duration {
	return max(r.srtt+max(4*r.rttvar, r.srtt/4)+ackDelay, lo)
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
	smooth                         time.Duration // the queue, smoothed as srtt is
	seen                           bool
}

// sample folds in one one-way delay v seen at now.
func (o *owdTracker) sample(v, now time.Duration) {
	if !o.seen {
		o.latest, o.minCur, o.minPrev, o.winAt, o.seen = v, v, v, now, true
		return
	}
	if now-o.winAt >= minWindow {
		o.minPrev, o.minCur, o.winAt = o.minCur, v, now
	}
	o.minCur = min(o.minCur, v)
	o.latest = v
	o.smooth = (7*o.smooth + o.queue()) / 8
}

// queue returns the latest one-way delay's excess over the minimum.
func (o *owdTracker) queue() time.Duration {
	if !o.seen {
		return 0
	}
	return o.latest - min(o.minCur, o.minPrev)
}
