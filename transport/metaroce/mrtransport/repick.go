package mrtransport

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
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
// not raise the endpoint's send rate by RepickPolicy.Gain doubles the
// interval, up to RepickPolicy.MaxInterval (a gain resets it), so a
// fabric where moving cannot help (unequal links, one bottleneck) sees
// re-picks become rare. A re-pick after which the rate fell by Gain is
// undone (the old socket is still open, so the path returns to its old
// port): paths on separate links can look alike (one sender's scheduling
// moves both RTTs), and a move may land on a busier link.
//
// Only one end of a connection re-picks its paths (decides): a port names
// a path both ways (a router hashes the reversed addresses too), so both
// ends moving paths for their own sending would shuffle each other's
// placement. It is the lower-ranked end, unless that end only receives on
// the connection: then the sending end decides, whose per-path queueing
// delays show which paths share a link (see decides). crowded.go adds a
// second rule, for links that several connections share.

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
	// Early is how long the early phase lasts, counted from the first
	// data the endpoint's connections carry (either way) in the time
	// they carry data: a pause does not count (earlyClock); negative for
	// none (withDefaults makes it 0). Default 2 s; longer in proportion on paths whose
	// round trips make the phase sample slower than EarlySample (it
	// samples no faster than every two round trips), at most Early ×
	// Sample / EarlySample (see earlyLength). In
	// it, paths are sampled every EarlySample, a decision looks at the
	// last EarlyWindow samples and re-picks are paced EarlyInterval apart
	// (doubling as Interval does, up to 4 × EarlyInterval), so that the
	// paths that share a link at the start find the links left unused
	// within the first second, before the steady pace takes over.
	Early time.Duration
	// EarlySample is the sampling period of the early phase, 10 ms to
	// Sample. Default 20 ms.
	EarlySample time.Duration
	// EarlyWindow is the samples an early decision looks at, 4 to
	// Window. Default 10.
	EarlyWindow int
	// EarlyInterval is the least time between two re-picks in the early
	// phase, at least EarlySample × EarlyWindow. Default 200 ms.
	EarlyInterval time.Duration
	// Crowded is how much higher than the lowest path's score (its rates
	// as shares of the median of the connection's other paths') another
	// path's must be for the lowest to count as on the most crowded link
	// and be re-picked (see pickCrowded), above 1; negative: off.
	// Default 1.5.
	Crowded float64
	// CrowdedWindow is the samples a crowded decision, and the judgement
	// of its move, look at (the newest of the phase's window), 4 to
	// EarlyWindow. Default 5.
	CrowdedWindow int
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
	if p.Crowded >= 0 && p.Crowded <= 1 {
		p.Crowded = 1.5
	}
	if p.CrowdedWindow <= 0 {
		p.CrowdedWindow = 5
	}
	switch {
	case p.Early < 0:
		p.Early = 0
	case p.Early == 0:
		p.Early = 2 * time.Second
	}
	def(&p.EarlySample, 20*time.Millisecond)
	p.EarlySample = min(max(p.EarlySample, 10*time.Millisecond), p.Sample)
	if p.EarlyWindow <= 0 {
		p.EarlyWindow = 10
	}
	p.EarlyWindow = min(max(p.EarlyWindow, 4), p.Window)
	def(&p.EarlyInterval, 200*time.Millisecond)
	p.EarlyInterval = max(p.EarlyInterval, p.EarlySample*time.Duration(p.EarlyWindow))
	p.CrowdedWindow = min(max(p.CrowdedWindow, 4), p.EarlyWindow)
	return p
}

// early returns the policy of the early phase: p with its sampling,
// window and pacing replaced by the early ones.
func (p RepickPolicy) early() RepickPolicy {
	p.Sample, p.Window, p.Interval, p.MaxInterval = p.EarlySample, p.EarlyWindow, p.EarlyInterval, 4*p.EarlyInterval
	return p
}

// pathSample is one path's figures at one instant (cumulative counters
// from metaroce.PathStats).
type pathSample struct {
	BytesAcked int64
	Acked      int64 // DATA packets acknowledged (this direction)
	Recv       int64 // DATA packets received new on the path (the other direction)
	Lost, ECN  int64
	Queue      time.Duration      // SRTT - MinRTT
	State      metaroce.PathState // the path's state (a cut path's is PathSuspect or PathDead)
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

// steadyLoad reports whether one connection's windows of samples
// (windows[i]: path i's, oldest first) show it loaded throughout: each
// direction that carried data in the window (DATA packets acknowledged
// and received, summed over the paths: one unit both ways) carried at
// least a quarter of its mean per sampling interval in every interval. A
// direction that carried under a sixteenth of the other's packets is a
// trickle (a barrier's or a header's messages beside a bulk transfer) and
// is not judged: it would otherwise turn the rule off for one-way bulk
// connections whenever a message comes back. A window with a pause in it
// (between a job's calls, a rank not scheduled) shows the paths' shares
// of the pause's edges, not of their links: in the lab, the crowded rule
// named a path that had carried nothing in such a window, the only one on
// its link, and moved it off, leaving the link unused (a ring job's
// crossing 7 -> 0, session 24). It is false for windows of unequal
// lengths, of fewer than two samples, or without data. It allocates
// nothing.
func steadyLoad(windows [][]pathSample) bool {
	if len(windows) == 0 || len(windows[0]) < 2 {
		return false
	}
	n := len(windows[0])
	var sentSum, recvSum int64
	for _, w := range windows {
		if len(w) != n {
			return false
		}
		sentSum += w[n-1].Acked - w[0].Acked
		recvSum += w[n-1].Recv - w[0].Recv
	}
	judgeSent := sentSum > 0 && 16*sentSum >= recvSum
	judgeRecv := recvSum > 0 && 16*recvSum >= sentSum
	if !judgeSent && !judgeRecv {
		return false
	}
	intervals := int64(n - 1)
	for k := 1; k < n; k++ {
		var sent, recv int64
		for _, w := range windows {
			sent += w[k].Acked - w[k-1].Acked
			recv += w[k].Recv - w[k-1].Recv
		}
		if judgeSent && 4*sent*intervals < sentSum || judgeRecv && 4*recv*intervals < recvSum {
			return false
		}
	}
	return true
}

// decides reports whether the end of rank self decides for its
// connection to peer (re-picks its paths, by either rule), from that
// connection's newest windows of samples (windows[i]: path i's, oldest
// first; DATA packets acknowledged, of this end's sending, and received,
// of the peer's, summed over the paths: one unit both ways). The
// lower-ranked end decides, unless its sending is a trickle beside what
// it receives (under a sixteenth): then it only receives, and the pair
// rule, which reads the queueing delays of its own sending, cannot see
// the connection; only the crowded rule's received rates could, and a
// receiving end that moved one path at a time that way left a ring's
// crossing (the lab's 7 -> 0) on 3 of 4 links for seconds. The
// higher-ranked end decides where the lower one's sending is under a
// thirty-second of its own (so the ends, each reading its own counters of
// the same packets, do not both decide near the threshold: between a
// thirty-second and a sixteenth neither does). Windows of fewer than two
// samples, or that carried nothing, leave the lower end deciding.
func decides(self, peer int, windows [][]pathSample) bool {
	var sent, recv int64
	for _, w := range windows {
		if len(w) >= 2 {
			sent += w[len(w)-1].Acked - w[0].Acked
			recv += w[len(w)-1].Recv - w[0].Recv
		}
	}
	if self < peer {
		return !(recv > 0 && 16*sent < recv)
	}
	return sent > 0 && 32*recv < sent
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
// some path of the connection, or peak (the best recent per-path rate, in
// bytes per sample), outruns by p.Faster: capacity is known to exist
// elsewhere. Else it is taken from any pair and reported as a try (there
// may be an unused link, or the pair may be on separate links that look
// alike).
//
// Moving a member of a pair never leaves a link unused that was used: the
// other member stays on it.
func pickRepick(windows [][]pathSample, peak float64, p RepickPolicy) (path int, try, ok bool) {
	f := make([]pathFigures, len(windows))
	fastest := peak
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
	return best, !bestOutrun, best >= 0
}

// earlyMoves is the most paths a re-pick on evidence moves at once in the
// early phase (pickMore), and earlyMulti the most such re-picks of one
// connection there: enough to find a link a short job's connection
// started without (each path moved lands on it 1 time in 4), few enough
// that connections whose links are all used, unevenly (links that several
// connections share), are not reshuffled three paths at a time through
// the whole phase. They are made only while the endpoint's connection
// is the only one carrying data (repickSample): a path's socket carries
// that path of every connection of the endpoint, and pickMore keeps a
// path on each link of the connection it judges only. In the simulated
// WAN's ring, where every rank carries two connections at once, moving
// several paths at once regardless raised the port re-picks by about 40 %
// and lowered the ring's share of its bound (runs of 6 seeds: 90.1 and
// 92.7 % against 92.9 and 93.35 %).
const earlyMoves, earlyMulti = 3, 3

// pickMore returns up to most-1 paths to move together with first, the
// path pickRepick named on evidence: members of other pairs that behave
// as one and that a path of the connection, or peak, outruns by p.Faster
// (slowest pairs first, the slower member where it can), chosen so that
// every path moved has a partner that stays, on its link (first keeps
// one of its own), and running at most a quarter faster than first (on
// the most crowded links, as first: a placement whose links are all used
// but unevenly, 2 2 2 1, moves one path at a time, as before). A new port lands on an unused link by chance (1
// in 4 where one of 4 is unused), so moving one path a decision found a
// ring's crossing on 3 of 4 links for seconds in some runs; moving the
// spare members of each crowded link's pairs at once tries as many ports
// in one decision's time, and, as the single move, never leaves a link
// unused that was used (each link moved from keeps the partner). The
// figures are pickRepick's (windows, peak).
func pickMore(windows [][]pathSample, peak float64, p RepickPolicy, first, most int) []int {
	f := make([]pathFigures, len(windows))
	fastest := peak
	for i, w := range windows {
		f[i] = summarise(w)
		fastest = max(fastest, f[i].rate)
	}
	type pair struct{ slow, other int }
	var pairs []pair
	for i := range f {
		for j := i + 1; j < len(f); j++ {
			if !behaveAsOne(f[i], f[j], p.Correlation) {
				continue
			}
			k, o := i, j
			if f[j].rate <= f[i].rate {
				k, o = j, i
			}
			if fastest >= p.Faster*f[k].rate {
				pairs = append(pairs, pair{k, o})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(f[a.slow].rate, f[b.slow].rate) })
	moved, stays := map[int]bool{first: true}, map[int]bool{}
	for _, q := range pairs {
		if q.slow == first {
			stays[q.other] = true // first's partner, on its link
			break
		}
	}
	if len(stays) == 0 {
		return nil // first is not the slower member of an outrun pair
	}
	var more []int
	for _, q := range pairs {
		if len(more) >= most-1 {
			break
		}
		for _, m := range [2][2]int{{q.slow, q.other}, {q.other, q.slow}} {
			if mv, partner := m[0], m[1]; !moved[mv] && !stays[mv] && !moved[partner] && f[mv].rate <= 1.25*f[first].rate {
				moved[mv], stays[partner] = true, true
				more = append(more, mv)
				break
			}
		}
	}
	return more
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

// repickPacer bounds how often an endpoint re-picks, with one interval
// for re-picks on evidence (a pair that another path, or the peak rate,
// outruns) and one for tries (a pair nothing outruns), and judges each
// re-pick Interval after it: a gain (the rate rose by Gain) returns its
// kind's interval to Interval; a loss (the rate fell by Gain) doubles it,
// up to MaxInterval, and asks for the re-pick to be undone (two paths'
// figures may look alike on separate links, and a move may land a path on
// a busier link); neither doubles a try's interval, and an evidence
// interval after flatRuns of them in a row (a move on evidence that
// changed nothing most likely landed on another used link: with one link
// of four unused, three in four do, so the next is made as soon).
type repickPacer struct {
	p                 RepickPolicy
	interval, explore time.Duration // after a re-pick on evidence, after a try
	last              time.Duration // when the last re-pick was made
	pending           bool          // the last re-pick is not judged yet
	pendingTry        bool          // it was a try
	rateBefore        float64       // the connection's rate before it
	flats             int           // re-picks on evidence judged flat in a row
	// byPath is set while the last re-pick waits for a judgement of its
	// own path's figures (a crowded path's move: settle), not the rate's.
	byPath bool
}

// flatRuns is how many re-picks on evidence in a row may change nothing
// before their interval doubles.
const flatRuns = 8

// repickOutcome is a judgement of the last re-pick.
type repickOutcome int

const (
	repickPending repickOutcome = iota // nothing judged now
	repickGain                         // keep it
	repickFlat                         // keep it, wait longer for the next
	repickLoss                         // undo it
)

func newRepickPacer(p RepickPolicy, now time.Duration) repickPacer {
	return repickPacer{p: p, interval: p.Interval, explore: p.Interval, last: now}
}

// judge judges the last re-pick at now, rate being the connection's rate
// now, once Interval has passed since it.
func (r *repickPacer) judge(now time.Duration, rate float64) repickOutcome {
	if !r.pending || r.byPath || now < r.last+r.p.Interval {
		return repickPending
	}
	r.pending = false
	iv := &r.interval
	if r.pendingTry {
		iv = &r.explore
	}
	switch {
	case rate >= r.p.Gain*r.rateBefore:
		*iv, r.flats = r.p.Interval, 0
		return repickGain
	case rate*r.p.Gain <= r.rateBefore:
		*iv = min(2**iv, r.p.MaxInterval)
		return repickLoss
	}
	if !r.pendingTry {
		if r.flats++; r.flats < flatRuns {
			return repickFlat
		}
		r.flats = 0
	}
	*iv = min(2**iv, r.p.MaxInterval)
	return repickFlat
}

// settle records the judgement of a re-pick judged by its path (byPath):
// kept returns the interval to Interval; undone counts as flat, and
// doubles the interval after flatRuns in a row (where moving finds nothing
// better, as on one bottleneck, the tries become rare).
func (r *repickPacer) settle(kept bool) {
	r.pending, r.byPath = false, false
	if kept {
		r.interval, r.flats = r.p.Interval, 0
		return
	}
	if r.flats++; r.flats >= flatRuns {
		r.flats = 0
		r.interval = min(2*r.interval, r.p.MaxInterval)
	}
}

// allow reports whether a re-pick (a try, if try) may be made at now: the
// last one has been judged and its kind's interval has passed.
func (r *repickPacer) allow(now time.Duration, try bool) bool {
	iv := r.interval
	if try {
		iv = r.explore
	}
	return !r.pending && now >= r.last+iv
}

// made records a re-pick (a try, if try) at now, rate being the
// connection's rate before it.
func (r *repickPacer) made(now time.Duration, rate float64, try bool) {
	r.last, r.pending, r.pendingTry, r.rateBefore = now, true, try, rate
}
