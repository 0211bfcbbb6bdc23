package mrtransport

import (
	"math"
	"time"
)

// Re-picking a path's port (see Config.Repick).
//
// ECMP routers hash a datagram's addresses and ports to pick one of their
// links, so a path's source port chooses its link, blindly: 8 paths over 4
// links leave a link unused about a third of the time. Two paths hashed
// onto one link share its capacity and its queue: they "behave as one".
// A sender sees that in its per-path figures: over the same interval their
// queueing delay (SRTT less MinRTT) rises and falls together and their
// losses come together, and each carries about the same, lower, rate than
// a path alone on a link. When it sees that, it re-opens one of the two
// paths' sockets on another port, so that the path's datagrams hash anew,
// as MetaRoCE's NIC re-picks a port to leave a bad route; first where some
// other path runs clearly faster (capacity is known to exist elsewhere).
// Moving one of two paths that share a link never leaves that link
// unused, so a re-pick cannot lose a link, only find one; where all paths
// share one bottleneck (behind one NIC) or every link is already used, it
// finds nothing and the pacer below makes the tries rare.
//
// The decision, pickRepick, is a pure function of a window of per-path
// samples taken every RepickPolicy.Sample. Re-picks are bounded: at most
// one per endpoint per RepickPolicy.Interval, and every re-pick that did
// not raise the connection's rate by RepickPolicy.Gain doubles the
// interval, up to RepickPolicy.MaxInterval (a gain resets it), so a
// fabric where moving cannot help (unequal links, one bottleneck) sees
// re-picks become rare.

// RepickPolicy configures port re-picking; see Config.Repick. A zero field
// takes its default.
type RepickPolicy struct {
	// Off turns re-picking off.
	Off bool
	// Sample is how often the per-path figures are sampled. Default
	// 100 ms, at least 10 ms.
	Sample time.Duration
	// Window is the samples a decision looks at, 4 to 64. Default 10.
	Window int
	// Interval is the least time between two re-picks of an endpoint.
	// Default 1 s, at least Sample × Window.
	Interval time.Duration
	// MaxInterval bounds the interval as it doubles. Default 64 s.
	MaxInterval time.Duration
	// Correlation is the least Pearson correlation of two paths' series
	// (queueing delay changes, or losses, per sample) for them to behave
	// as one, 0 to 1. Default 0.8.
	Correlation float64
	// Faster is how much faster than a shared pair's slower path another
	// path must run for a re-pick, above 1. Default 1.3.
	Faster float64
	// Gain is the rise of the connection's rate that counts a re-pick as
	// successful, above 1. Default 1.05.
	Gain float64
}

// withDefaults fills in p's zero fields and clamps the others.
func (p RepickPolicy) withDefaults() RepickPolicy {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.Sample, 100*time.Millisecond)
	p.Sample = max(p.Sample, 10*time.Millisecond)
	if p.Window <= 0 {
		p.Window = 10
	}
	p.Window = min(max(p.Window, 4), 64)
	def(&p.Interval, time.Second)
	p.Interval = max(p.Interval, p.Sample*time.Duration(p.Window))
	def(&p.MaxInterval, 64*time.Second)
	p.MaxInterval = max(p.MaxInterval, p.Interval)
	if p.Correlation <= 0 || p.Correlation > 1 {
		p.Correlation = 0.8
	}
	if p.Faster <= 1 {
		p.Faster = 1.3
	}
	if p.Gain <= 1 {
		p.Gain = 1.05
	}
	return p
}

// pathSample is one path's figures at one instant (cumulative counters
// from metaroce.PathStats).
type pathSample struct {
	BytesAcked int64
	Lost, ECN  int64
	Queue      time.Duration // SRTT - MinRTT
}

// pathFigures summarises one path over a window of samples.
type pathFigures struct {
	rate      float64   // bytes acknowledged per sample interval
	queue     []float64 // change of the queueing delay over each sample interval, seconds
	loss      []float64 // losses and CE marks in each sample interval
	congested bool      // some queueing delay, loss or CE mark in the window
}

// minQueue is the least mean queueing delay that counts as congestion
// without loss or CE marks.
const minQueue = 100 * time.Microsecond

// summarise turns a path's window of samples (oldest first) into figures.
func summarise(w []pathSample) pathFigures {
	var f pathFigures
	if len(w) < 2 {
		return f
	}
	f.rate = float64(w[len(w)-1].BytesAcked-w[0].BytesAcked) / float64(len(w)-1)
	var qsum float64
	marks := false
	for i := 1; i < len(w); i++ {
		q := w[i].Queue.Seconds()
		f.queue = append(f.queue, q-w[i-1].Queue.Seconds())
		qsum += q
		l := float64(w[i].Lost - w[i-1].Lost + w[i].ECN - w[i-1].ECN)
		f.loss = append(f.loss, l)
		marks = marks || l > 0
	}
	f.congested = marks || qsum/float64(len(f.queue)) >= minQueue.Seconds()
	return f
}

// pickRepick decides which path to re-pick from the windows of samples of
// one connection's paths (windows[i]: path i's, oldest first, equal
// lengths), or returns false. Two paths behave as one when both carry
// data and are congested, their rates are within a quarter of each other,
// and the changes of their queueing delays from sample to sample, or their
// losses per sample, correlate at least p.Correlation (changes, not levels:
// two independent random walks often look correlated over a short window,
// their steps do not). The path picked is a member of such a pair, the
// slowest (the higher index on a tie), taken first from the pairs that
// some path of the connection outruns by p.Faster (capacity is known to
// exist elsewhere), else from any pair (there may be an unused link: the
// pacer makes such tries rare when they do not pay).
//
// Moving a member of a pair never leaves a link unused that was used: the
// other member stays on it.
func pickRepick(windows [][]pathSample, p RepickPolicy) (int, bool) {
	f := make([]pathFigures, len(windows))
	fastest := 0.0
	for i, w := range windows {
		f[i] = summarise(w)
		fastest = max(fastest, f[i].rate)
	}
	best, bestRate, bestOutrun := -1, math.Inf(1), false
	for i := range f {
		for j := i + 1; j < len(f); j++ {
			if !behaveAsOne(f[i], f[j], p.Correlation) {
				continue
			}
			k := i
			if f[j].rate <= f[i].rate {
				k = j
			}
			outrun := fastest >= p.Faster*f[k].rate
			better := outrun && !bestOutrun ||
				outrun == bestOutrun && (f[k].rate < bestRate || f[k].rate == bestRate && k > best)
			if better {
				best, bestRate, bestOutrun = k, f[k].rate, outrun
			}
		}
	}
	return best, best >= 0
}

// behaveAsOne reports whether two paths' figures show one bottleneck.
func behaveAsOne(a, b pathFigures, minCorr float64) bool {
	if a.rate <= 0 || b.rate <= 0 || !a.congested || !b.congested {
		return false
	}
	if math.Abs(a.rate-b.rate) > 0.25*max(a.rate, b.rate) {
		return false
	}
	return correlation(a.queue, b.queue) >= minCorr || correlation(a.loss, b.loss) >= minCorr
}

// correlation is the Pearson correlation of x and y (equal lengths), or 0
// when either is constant.
func correlation(x, y []float64) float64 {
	n := min(len(x), len(y))
	if n < 3 {
		return 0
	}
	var mx, my float64
	for i := range n {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// repickPacer bounds how often an endpoint re-picks: once per interval,
// which doubles (up to MaxInterval) after each re-pick that brought no
// gain and returns to Interval after one that did.
type repickPacer struct {
	p        RepickPolicy
	interval time.Duration
	last     time.Duration // when the last re-pick was made
	next     time.Duration // earliest next re-pick
	// rateBefore is the connection's rate before the last re-pick, judged
	// once its interval has passed; 0: nothing to judge.
	rateBefore float64
}

func newRepickPacer(p RepickPolicy, now time.Duration) repickPacer {
	return repickPacer{p: p, interval: p.Interval, next: now + p.Interval}
}

// allow reports whether a re-pick may be made at now, rate being the
// connection's rate now; it first judges the last re-pick.
func (r *repickPacer) allow(now time.Duration, rate float64) bool {
	if r.rateBefore > 0 && now >= r.next {
		if rate >= r.p.Gain*r.rateBefore {
			r.interval = r.p.Interval
		} else {
			r.interval = min(2*r.interval, r.p.MaxInterval)
		}
		r.rateBefore = 0
		r.next = r.last + r.interval
	}
	return now >= r.next
}

// made records a re-pick at now, rate being the connection's rate before.
func (r *repickPacer) made(now time.Duration, rate float64) {
	r.rateBefore = max(rate, math.SmallestNonzeroFloat64)
	r.last, r.next = now, now+r.interval
}
