package mrtransport

import (
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// Re-picking the paths of the most crowded links (RepickPolicy.Crowded).
//
// Where several connections share a set of ECMP links (the sites' WAN
// links, carrying every shard owner's connection), each link is shared
// per path, about equally: a path's rate is its link's rate over the
// paths on the link, from all the connections. The hash puts the paths on
// the links unevenly (32 paths on 4 links: 8 ± 2.4 each), so a connection
// whose paths lie on the emptier links runs faster, and the collective
// waits for the slowest. No connection sees the others' paths, but each
// sees its own paths' rates, both ways (bytes acknowledged, packets
// received): a path whose rates, as shares of the median of the
// connection's other paths, are the lowest is, most likely, on the most
// crowded links. pickCrowded names it when another path of the connection
// scores Crowded times higher; the path is moved to a fresh port, and
// judged by its own score once its window of samples is full again: kept
// if the score did not fall, else undone (crowdJudge). Repeated over the
// connections, this takes paths off the most crowded links and keeps them
// off: the links' totals even out, whatever the hash. On links of unequal
// rates the paths' rates even out instead (a slower link keeps fewer
// paths), which is what each link can carry; on one bottleneck every
// path runs alike and nothing is named.
//
// A port names a path both ways (a router hashes the reversed addresses
// too), so a move by either end moves both directions: if both ends moved
// paths for their own sending, each would shuffle the other's placement.
// Only one end of a connection moves paths for this rule (decides: the
// lower-ranked end, unless it only receives), scoring each path by both
// directions.

// medianOthers returns the median of the values other than skip that are
// positive, or 0 when fewer than two are.
func medianOthers(v []float64, skip int) float64 {
	var r []float64
	for i, x := range v {
		if i != skip && x > 0 {
			r = append(r, x)
		}
	}
	if len(r) < 2 {
		return 0
	}
	slices.Sort(r)
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// crowdScores scores each path of one connection (windows[i]: path i's
// samples, oldest first): the mean, over the directions that carried
// data on at least three paths, of the path's rate over its window as a
// share of the median of the other paths'. ok is false when a window
// holds fewer than two samples or neither direction carried data.
func crowdScores(windows [][]pathSample) (scores []float64, ok bool) {
	if len(windows) < 3 {
		return nil, false
	}
	sent := make([]float64, len(windows))
	recv := make([]float64, len(windows))
	for i, w := range windows {
		if len(w) < 2 {
			return nil, false
		}
		a, b := w[0], w[len(w)-1]
		sent[i], recv[i] = float64(b.BytesAcked-a.BytesAcked), float64(b.Recv-a.Recv)
	}
	scores = make([]float64, len(windows))
	dirs := 0
	for _, rates := range [][]float64{sent, recv} {
		busy := 0
		for _, r := range rates {
			if r > 0 {
				busy++
			}
		}
		if busy < 3 {
			continue
		}
		dirs++
		for i, r := range rates {
			if m := medianOthers(rates, i); m > 0 {
				scores[i] += r / m
			}
		}
	}
	if dirs == 0 {
		return nil, false
	}
	for i := range scores {
		scores[i] /= float64(dirs)
	}
	return scores, true
}

// pickCrowded names the path of one connection to move off the most
// crowded links: the lowest-scoring path (crowdScores over the newest
// p.CrowdedWindow samples, which every path's window must hold), if
// another path scores at least p.Crowded times higher. score is the
// path's score. It names nothing when p.Crowded is negative.
func pickCrowded(windows [][]pathSample, p RepickPolicy) (path int, score float64, ok bool) {
	path, score, v := judgeCrowd(windows, p)
	return path, score, v == crowdNamed
}

// crowdVerdict is what judgeCrowd found on one connection.
type crowdVerdict int

const (
	crowdUnknown crowdVerdict = iota // too few samples, or too few paths carried data
	crowdEven                        // scored: no path Crowded times below another
	crowdNamed                       // scored: a path named
)

// judgeCrowd is pickCrowded, telling a connection scored and found even
// (crowdEven) from one not scored (crowdUnknown).
func judgeCrowd(windows [][]pathSample, p RepickPolicy) (path int, score float64, v crowdVerdict) {
	if p.Crowded < 0 {
		return 0, 0, crowdUnknown
	}
	for _, w := range windows {
		if len(w) < p.CrowdedWindow {
			return 0, 0, crowdUnknown
		}
	}
	scores, ok := crowdScores(newest(windows, p.CrowdedWindow))
	if !ok {
		return 0, 0, crowdUnknown
	}
	k := -1
	for i, s := range scores {
		if s == 0 && idle(windows[i]) {
			continue
		}
		if k < 0 || s < scores[k] {
			k = i
		}
	}
	if k < 0 || slices.Max(scores) < p.Crowded*scores[k] {
		return 0, 0, crowdEven
	}
	return k, scores[k], crowdNamed
}

// idle reports whether a path that carried nothing either way over its
// window w (a score of 0) was idle, not cut: its state at the newest
// sample is PathGood or PathSkip (the scheduler gave it nothing, as it
// does a path that saw congestion while others have room, or a move's
// fresh path in its first round trips). A new port cannot make an idle
// path carry more; a cut path (PathSuspect, PathDead: its packets timed
// out) may be hashed onto a live link, so it is named as before. Of the
// namings in the lab's ring jobs (session 23's ring_repicks), 7-19 of
// 74-84 a job were of paths that carried nothing.
func idle(w []pathSample) bool {
	if len(w) == 0 {
		return false
	}
	s := w[len(w)-1].State
	return s == metaroce.PathGood || s == metaroce.PathSkip
}

// crowdPacer paces pickCrowded's moves per connection. A move ends the
// churn it is for only where the connection's paths lie on links of
// unequal loads: there, moving its lowest paths off the most crowded
// links evens its paths' rates within a few moves, and the connection is
// then found even. Where they cannot be evened (a connection over one
// link, whose paths keep unequal shares of it, as the lab's connections
// between a site's hosts do: 20 namings a deciding rank in 10 s, session
// 23's ring_repicks), a new port changes nothing but costs the path its
// window. So each connection's moves are paced apart, the wait doubling
// with every move, from a window's time (p.CrowdedWindow samples) up to
// the phase's MaxInterval; it returns to nothing once the
// connection is found even on p.CrowdedWindow decisions in a row (a
// window of samples not overlapping the move's). The first move of a
// connection, and the second, are not delayed (each waits for its
// judgement, a window, anyway).
type crowdPacer struct {
	conns map[int]*crowdConn // by peer rank
}

// crowdConn is one connection's pacing.
type crowdConn struct {
	wait  time.Duration // before the move after the next
	next  time.Duration // the next move's earliest time
	evens int           // decisions in a row that found it even
}

// pick is pickCrowded on peer's connection at now, paced: it names the
// path only once the connection's wait since its last move has passed.
func (c *crowdPacer) pick(peer int, now time.Duration, windows [][]pathSample, p RepickPolicy) (path int, score float64, ok bool) {
	cc := c.conn(peer)
	path, score, v := judgeCrowd(windows, p)
	switch v {
	case crowdEven:
		if cc.evens++; cc.evens >= p.CrowdedWindow {
			cc.wait, cc.next = 0, 0
		}
		return 0, 0, false
	case crowdNamed:
		cc.evens = 0
		return path, score, now >= cc.next
	}
	return 0, 0, false
}

// moved records a move on peer's connection at now, p being the policy
// of the phase now. The wait stays within p.MaxInterval: bounding it by
// the steady one in the early phase too (4 × EarlyInterval = 800 ms
// there) cost the simulated WAN 0.65 % of its bound at 64 MiB
// (TestWANSimHierarchical, 3 runs of 6 seeds: 91.85 against 92.5 %).
func (c *crowdPacer) moved(peer int, now time.Duration, p RepickPolicy) {
	cc := c.conn(peer)
	cc.next = now + cc.wait
	cc.wait = min(max(2*cc.wait, time.Duration(p.CrowdedWindow)*p.Sample), p.MaxInterval)
}

func (c *crowdPacer) conn(peer int) *crowdConn {
	if c.conns == nil {
		c.conns = make(map[int]*crowdConn)
	}
	cc := c.conns[peer]
	if cc == nil {
		cc = &crowdConn{}
		c.conns[peer] = cc
	}
	return cc
}

// crowdScore returns path's score (crowdScores), or 0 when unknown.
func crowdScore(windows [][]pathSample, path int) float64 {
	scores, ok := crowdScores(windows)
	if !ok || path < 0 || path >= len(scores) {
		return 0
	}
	return scores[path]
}

// newest returns the newest n samples of each path's window (all of a
// window that holds fewer).
func newest(windows [][]pathSample, n int) [][]pathSample {
	out := make([][]pathSample, len(windows))
	for i, w := range windows {
		out[i] = w[max(len(w)-n, 0):]
	}
	return out
}

// crowdMove is a re-pick made by pickCrowded, waiting for its judgement.
type crowdMove struct {
	on     bool
	peer   int           // the connection's peer rank
	path   int           // the path moved
	before float64       // its score before
	at     time.Duration // when it was made
}

// crowdJudge judges a crowded path's move: keep it when the path's score
// after the move (after) is at least its score before; an after of 0
// (unknown) keeps it.
func crowdJudge(before, after float64) (keep bool) {
	return after <= 0 || after >= before
}
