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
	paths          int // the connection's paths, which share the additive step
	// competing, if positive, is how many of the connection's paths
	// compete with a loss-based flow, this one among them: the step is
	// then one packet per window shared among them (see path.competingAt).
	competing int
	acked     int // bytes acknowledged toward the next additive step
	// cutAt is when the window was last cut; signals about packets sent
	// before it belong to the same episode and are ignored.
	cutAt time.Duration
	cuts  [3]int64 // cuts made per signal
}

func newWindow(mss, initialPkts, maxPkts, paths int) window {
	return window{cwnd: mss * initialPkts, ssthresh: mss * maxPkts, mss: mss, lo: mss, hi: mss * maxPkts,
		paths: max(paths, 1), cutAt: -1}
}

// aiRefRTT and aiMaxStep scale the additive increase with the RTT: a
// path grows by srtt/aiRefRTT packets per window acknowledged (at least
// one, at most aiMaxStep), so that it regains a cut in about the same time
// at 100 ms as at 10 ms, instead of ten times slower (at 100 ms and 200
// Mbit/s, one packet per RTT regains a 15% cut of a 2.5 MB window in 4 s).
// Beyond aiRefRTT the step is counted in packets of at least aiRefPacket
// bytes, so that a path of 1500-byte datagrams regains a cut in the same
// time as one of 9000-byte ones.
const (
	aiRefRTT    = 10 * time.Millisecond
	aiMaxStep   = 16
	aiRefPacket = 9000
	coupleBelow = 16
)

// onAck grows the window for n newly acknowledged bytes on a path whose
// smoothed RTT is rtt. The RTT-scaled step is at most an eighth of the
// window (and at least a packet): a step of several packets on a window
// of a few would grow it by half each round trip. While the window is
// under coupleBelow packets (many flows in a small bandwidth-delay
// product, as in an incast), the step is shared among the connection's
// paths, so that the connection grows as one flow however many paths it
// spreads over (as MPTCP couples its subflows, RFC 6356), and 6
// connections of 8 paths through one shallow buffer do not keep it
// overflowing whatever the cuts; a larger window grows on its own, so that
// a path that lost its window (a route 10 times longer) regains it in
// about a second. A path that took no ECN mark or congestion loss lately
// (free, path.congested) shares its step among freeShare paths of the
// connection only, not all of them (see freeShare).
func (w *window) onAck(n int, rtt time.Duration, free bool) {
	if w.cwnd < w.ssthresh {
		w.cwnd = min(w.cwnd+n, w.hi)
		return
	}
	step := w.mss
	if w.competing > 0 {
		step = max(w.mss/w.competing, 1)
	} else if k := min(int(rtt/aiRefRTT), aiMaxStep); k > 1 {
		step = max(w.mss, aiRefPacket) * k
	}
	if w.cwnd < coupleBelow*w.mss && w.competing == 0 {
		if free {
			step = step * min(freeShare, w.paths) / w.paths
		} else {
			step /= w.paths
		}
	}
	step = max(min(step, max(w.mss, w.cwnd/8)), 1)
	w.acked += n
	for w.acked >= w.cwnd {
		w.acked -= w.cwnd
		w.cwnd = min(w.cwnd+step, w.hi)
	}
}

// onSignal cuts the window for signal s about a packet sent at sentAt,
// unless the window was already cut after that packet left. It reports
// whether it cut. factor, if positive, replaces the signal's cut factor
// (a delay signal cuts by what drains the queue it measured).
//
// The cut that ends slow start goes down to bdp (what the path delivered
// in its last round trip, scaled to its base RTT; 0: unknown) if that is
// lower, but not below half the window: slow start learns of the queue it
// built a round trip late, when it has sent up to twice what the path
// holds, and a cut of that doubled window by a few per cent would leave
// it above the path for round trips more.
func (w *window) onSignal(s signal, sentAt, now time.Duration, factor float64, bdp int) bool {
	if sentAt <= w.cutAt {
		return false
	}
	w.cutAt = now
	if factor <= 0 {
		factor = cutFactor[s]
	}
	cut := int(float64(w.cwnd) * factor)
	if w.cwnd < w.ssthresh && bdp > 0 {
		cut = max(min(cut, bdp), w.cwnd/2)
	}
	w.cwnd = max(cut, w.lo)
	w.ssthresh = w.cwnd
	w.acked = 0
	w.cuts[s]++
	return true
}

// reset returns the window to its initial state, for a revived path.
func (w *window) reset(initialPkts int) {
	w.cwnd, w.ssthresh, w.acked = w.mss*initialPkts, w.hi, 0
}

// deliveryMarks is how many marks a delivery keeps: spaced a quarter of
// the span apart, they cover two spans.
const deliveryMarks = 8

// delivery measures a path's delivery rate over its last round trip: the
// bytes acknowledged since a mark about one span (the smoothed RTT) ago.
type delivery struct {
	marks [deliveryMarks]struct {
		at    time.Duration
		total int64
	}
	head, n int
	total   int64 // bytes acknowledged
}

// onAck counts n bytes acknowledged at now, marking the total every
// quarter span.
func (d *delivery) onAck(n int, now, span time.Duration) {
	d.total += int64(n)
	last := d.marks[(d.head+deliveryMarks-1)%deliveryMarks]
	if d.n == 0 || now-last.at >= span/4 {
		d.marks[d.head].at, d.marks[d.head].total = now, d.total
		d.head = (d.head + 1) % deliveryMarks
		d.n = min(d.n+1, deliveryMarks)
	}
}

// rate returns the bytes per second acknowledged since the newest mark
// at least span before now (or the oldest mark), or 0 when unknown.
func (d *delivery) rate(now, span time.Duration) float64 {
	if d.n == 0 {
		return 0
	}
	k := (d.head + deliveryMarks - d.n) % deliveryMarks // the oldest
	for i := 1; i <= d.n; i++ {
		j := (d.head + deliveryMarks - i) % deliveryMarks
		if now-d.marks[j].at >= span {
			k = j
			break
		}
	}
	m := d.marks[k]
	if now <= m.at {
		return 0
	}
	return float64(d.total-m.total) / (now - m.at).Seconds()
}
