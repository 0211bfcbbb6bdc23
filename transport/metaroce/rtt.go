package metaroce

import "time"

// rttEstimator keeps a path's smoothed RTT, its mean deviation and its
// minimum, in the manner of RFC 6298.
type rttEstimator struct {
	srtt, rttvar, min, latest time.Duration
	has                       bool
}

func newRTT(initial time.Duration) rttEstimator {
	return rttEstimator{srtt: initial, rttvar: initial / 2}
}

// sample folds in one RTT measurement; non-positive samples are ignored.
func (r *rttEstimator) sample(s time.Duration) {
	if s <= 0 {
		return
	}
	r.latest = s
	if !r.has {
		r.srtt, r.rttvar, r.min, r.has = s, s/2, s, true
		return
	}
	r.min = min(r.min, s)
	dev := r.srtt - s
	if dev < 0 {
		dev = -dev
	}
	r.rttvar = (3*r.rttvar + dev) / 4
	r.srtt = (7*r.srtt + s) / 8
}

// rto returns the retransmission timeout, srtt + 4 rttvar, within bounds.
func (r *rttEstimator) rto(lo, hi time.Duration) time.Duration {
	return min(max(r.srtt+4*r.rttvar, lo), hi)
}

// base returns the minimum RTT, or the smoothed one before any sample.
func (r *rttEstimator) base() time.Duration {
	if r.has {
		return r.min
	}
	return r.srtt
}
