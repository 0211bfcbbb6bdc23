package metaroce

import "time"

// Congestion signals and the factor each cuts the window by.
type signal uint8

const (
	signalECN   signal = iota // the receiver saw ECN-CE marks
	signalLoss                // a packet was lost while the path was queueing
	signalDelay               // RTT rose above the minimum by the target
)

var cutFactor = [...]float64{signalECN: 0.8, signalLoss: 0.7, signalDelay: 0.85}

// window is a path's congestion window in bytes: slow start until the first
// signal, then additive increase of one packet per window acknowledged, and
// a multiplicative cut at most once per round trip.
type window struct {
	cwnd, ssthresh int
	mss            int
	lo, hi         int // bounds of cwnd
	acked          int // bytes acknowledged toward the next additive step
	// cutAt is when the window was last cut; signals about packets sent
	// before it belong to the same episode and are ignored.
	cutAt time.Duration
	cuts  [3]int64 // cuts made per signal
}

func newWindow(mss, initialPkts, maxPkts int) window {
	return window{cwnd: mss * initialPkts, ssthresh: mss * maxPkts, mss: mss, lo: mss, hi: mss * maxPkts, cutAt: -1}
}

// aiRefRTT and aiMaxStep scale the additive increase with the RTT: a
// path grows by srtt/aiRefRTT packets per window acknowledged (at least
// one, at most aiMaxStep), so that it regains a cut in about the same time
// at 100 ms as at 10 ms, instead of ten times slower (at 100 ms and 200
// Mbit/s, one packet per RTT regains a 15% cut of a 2.5 MB window in 4 s).
const (
	aiRefRTT  = 10 * time.Millisecond
	aiMaxStep = 16
)

// onAck grows the window for n newly acknowledged bytes on a path whose
// smoothed RTT is srtt.
func (w *window) onAck(n int, srtt time.Duration) {
	if w.cwnd < w.ssthresh {
		w.cwnd = min(w.cwnd+n, w.hi)
		return
	}
	step := w.mss * min(max(int(srtt/aiRefRTT), 1), aiMaxStep)
	w.acked += n
	for w.acked >= w.cwnd {
		w.acked -= w.cwnd
		w.cwnd = min(w.cwnd+step, w.hi)
	}
}

// onSignal cuts the window for signal s about a packet sent at sentAt,
// unless the window was already cut after that packet left. It reports
// whether it cut.
func (w *window) onSignal(s signal, sentAt, now time.Duration) bool {
	if sentAt <= w.cutAt {
		return false
	}
	w.cutAt = now
	w.cwnd = max(int(float64(w.cwnd)*cutFactor[s]), w.lo)
	w.ssthresh = w.cwnd
	w.acked = 0
	w.cuts[s]++
	return true
}

// reset returns the window to its initial state, for a revived path.
func (w *window) reset(initialPkts int) {
	w.cwnd, w.ssthresh, w.acked = w.mss*initialPkts, w.hi, 0
}
