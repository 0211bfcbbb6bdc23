package mrtransport

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

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
	f.rate = windowRate(w)
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

// windowRate is summarise's rate alone, without its allocations: the
// bytes acknowledged per sample interval over a path's window of samples
// (oldest first), 0 for fewer than two. The sampler takes it for every
// path of every connection at each sample.
func windowRate(w []pathSample) float64 {
	if len(w) < 2 {
		return 0
	}
	return float64(w[len(w)-1].BytesAcked-w[0].BytesAcked) / float64(len(w)-1)
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
// alike). A connection of two paths with no such pair tries its slower
// path when both are congested and their rates differ by more than a
// quarter (unevenPair).
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
	if best < 0 && len(f) == 2 {
		if k, ok := unevenPair(f[0], f[1]); ok {
			return k, true, true
		}
	}
	return best, !bestOutrun, best >= 0
}

// unevenPair reports whether a connection of two paths, a and b, both
// carrying data and congested, runs them at rates more than a quarter
// apart, and then names the slower (1 for b). The crowded rule cannot
// score two paths (it has no median of others), and two paths sharing a
// link need not split it evenly: under the race detector on 2 busy cores,
// one pair ran 2:1 on one link for 30 s (their queueing delays read 0.8
// and 1.2 ms on the same queue; why their windows kept that split was not
// found), so they never behaved as one and a link stayed unused. The
// slower path is tried elsewhere; the pacer judges the try by the
// connection's rate, undoing it if the rate fell (two paths on separate
// links of unequal rates: the move may land the slower on the faster's
// link) and making tries that change nothing rare.
func unevenPair(a, b pathFigures) (slower int, ok bool) {
	if !bothCongested(a, b) || ratesAlike(a, b) {
		return 0, false
	}
	if b.rate < a.rate {
		return 1, true
	}
	return 0, true
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
	if !bothCongested(a, b) || !ratesAlike(a, b) {
		return false
	}
	return correlation(a.queue, b.queue) >= minCorr || correlation(a.loss, b.loss) >= minCorr
}

// bothCongested reports whether both paths carried data and were
// congested.
func bothCongested(a, b pathFigures) bool {
	return a.rate > 0 && b.rate > 0 && a.congested && b.congested
}

// ratesAlike reports whether two paths' rates lie within a quarter of the
// faster's.
func ratesAlike(a, b pathFigures) bool {
	return math.Abs(a.rate-b.rate) <= 0.25*max(a.rate, b.rate)
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
