package mrtransport

import (
	"math"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// repicker is an endpoint's port re-picking state (see repick.go). Its
// fields are guarded by eng.mu.
type repicker struct {
	p RepickPolicy // the policy of the phase now: base's, or base.early()
	// base is the policy configured; early is whether the early phase
	// is on (waiting for data, or running until earlyClock's busy time
	// reaches earlyLength).
	base       RepickPolicy
	early      bool
	earlyClock earlyClock
	rtt        time.Duration // the largest of the paths' least RTTs, at the last sample
	pacer      repickPacer
	windows    map[int][][]pathSample // by peer rank, by path: the last samples, oldest first
	peaks      map[int]float64        // by peer rank: the best recent per-path rate, decaying
	stats      []metaroce.PathStats   // scratch
	count      int64                  // re-picks made
	undone     int64                  // of those, undone
	// lastPath and lastOld are the last re-pick's path and replaced
	// socket, for an undo; lastOld is nil once it cannot be. lastMore
	// are the paths moved with it (pickMore) and their replaced sockets,
	// undone with it.
	lastPath int
	lastOld  PathSocket
	lastMore []movedSock
	// multis counts, by peer rank, the re-picks that moved more than one
	// path (pickMore) in this early phase.
	multis map[int]int
	// crowd is the last re-pick of a crowded path (pickCrowded) while
	// it waits for its judgement; crowdNext is when the next may be made,
	// crowdBackoff the wait after an undo (0 until flatRuns in a row),
	// crowdUndos the undos in a row.
	crowd        crowdMove
	crowdNext    time.Duration
	crowdBackoff time.Duration
	crowdUndos   int
	crowdConns   crowdPacer // paces the crowded moves per connection
	// respin are the sockets an undo restored, for spinAdd outside eng.mu.
	respin []movedSock
}

// movedSock is a path and a socket of it.
type movedSock struct {
	path int
	s    PathSocket
}

// repickOn reports whether cfg re-picks ports: not with Repick.Off, on
// loopback, or with fixed ports (ListenAddr's port).
func repickOn(cfg Config) bool {
	return !cfg.Repick.Off && !cfg.loopback() && cfg.ListenAddr.Port() == 0
}

// startRepick starts the sampling goroutine, which ends when the endpoint
// closes. It is called once, by Listen.
func (e *Endpoint) startRepick() {
	p := e.cfg.Repick.withDefaults()
	rp := &repicker{p: p, base: p, windows: make(map[int][][]pathSample), peaks: make(map[int]float64), multis: make(map[int]int)}
	if p.Early > 0 {
		rp.p, rp.early = p.early(), true
	}
	e.eng.lock()
	rp.pacer = newRepickPacer(rp.p, e.eng.now())
	e.repick = rp
	e.eng.unlock()
	go func() {
		t := time.NewTimer(rp.p.Sample)
		defer t.Stop()
		for {
			select {
			case <-e.closing:
				return
			case <-t.C:
				paths, respin, next := e.repickSample()
				t.Reset(next)
				for _, r := range respin {
					e.eng.spinAdd(r.path, r.s)
				}
				for i, path := range paths {
					if err := e.repickPath(path, i > 0); err != nil {
						e.log.Warn("mrtransport: path port not re-picked", "path", path, "err", err)
					}
				}
			}
		}
	}()
}

// repickSample takes one sample of every connection's paths and returns
// the paths to re-pick, if the policy names one and the pacer allows it
// (more than one in the early phase, pickMore); it undoes the last
// re-pick if the pacer judges it a loss, and then returns the sockets
// restored (and their paths) for spinAdd. next is when to
// sample again: the sampling period of the phase now, in the early phase
// at least twice the largest of the paths' least RTTs (up to Sample).
func (e *Endpoint) repickSample() (paths []int, respin []movedSock, next time.Duration) {
	e.eng.lock()
	defer e.eng.unlock()
	rp := e.repick
	if e.closed || rp == nil {
		return nil, nil, time.Second
	}
	var minRTT time.Duration // the largest of the paths' least RTTs
	defer func() {
		respin, rp.respin = rp.respin, nil
		next, rp.rtt = rp.p.Sample, minRTT
		if rp.early {
			next = earlySample(rp.base, minRTT)
		}
	}()
	e.repickPhase(e.eng.now())
	pick, picked, try, pickPeer := -1, false, false, -1
	crowdPeer, crowdPath, crowdScore := -1, 0, 0.0
	total, allFull := 0.0, true
	busy := 0 // connections that carried data in their newest CrowdedWindow samples
	for _, p := range e.peers {
		if p == nil || !p.up || p.conn == 0 {
			continue
		}
		var ok bool
		_, rp.stats, ok = e.eng.core.ConnStats(p.conn, rp.stats[:0])
		if !ok {
			continue
		}
		w := rp.windows[p.rank]
		if len(w) != len(rp.stats) {
			w = make([][]pathSample, len(rp.stats))
		}
		full := true
		for i, ps := range rp.stats {
			w[i] = append(w[i], pathSample{BytesAcked: ps.BytesAcked, Acked: ps.PacketsAcked, Recv: ps.PacketsRecv, Lost: ps.PacketsLost, ECN: ps.ECNEchoed, Queue: max(ps.SRTT-ps.MinRTT, 0), State: ps.State})
			minRTT = max(minRTT, ps.MinRTT)
			if len(w[i]) > rp.p.Window {
				w[i] = append(w[i][:0], w[i][len(w[i])-rp.p.Window:]...)
			}
			if len(w[i]) < rp.p.Window {
				full, allFull = false, false
				continue
			}
			total += windowRate(w[i])
		}
		rp.windows[p.rank] = w
		recent := newest(w, rp.p.CrowdedWindow)
		if carried(recent) {
			busy++
		}
		decide := decides(e.cfg.Rank, p.rank, recent)
		if decide && !rp.crowd.on && steadyLoad(recent) {
			if c, score, ok := rp.crowdConns.pick(p.rank, e.eng.now(), w, rp.p); ok && (crowdPeer < 0 || score < crowdScore) {
				crowdPeer, crowdPath, crowdScore = p.rank, c, score
			}
		}
		if !full {
			continue
		}
		fastest := 0.0
		for i := range w {
			fastest = max(fastest, windowRate(w[i]))
		}
		rp.peaks[p.rank] = max(rp.peaks[p.rank]*peakDecay(rp.p.Sample), fastest)
		if !picked && decide {
			pick, try, picked = pickRepick(w, rp.peaks[p.rank], rp.p)
			pickPeer = p.rank
		}
	}
	now := e.eng.now()
	if e.judgeCrowded(now) {
		return nil, nil, 0
	}
	// In the early phase, a re-pick on evidence (which moves several
	// paths, pickMore) goes before a crowded path's (one path).
	evidence := rp.early && picked && !try && rp.pacer.allow(now, try)
	if crowdPeer >= 0 && !evidence && !rp.pacer.pending && now >= rp.crowdNext {
		rp.pacer.made(now, total, false)
		rp.pacer.byPath = true
		rp.crowd = crowdMove{on: true, peer: crowdPeer, path: crowdPath, before: crowdScore, at: now}
		rp.crowdConns.moved(crowdPeer, now, rp.p)
		e.log.Info("mrtransport: path on the most crowded link", "peer", crowdPeer, "path", crowdPath, "score", crowdScore)
		return []int{crowdPath}, nil, 0
	}
	if allFull {
		switch rp.pacer.judge(now, total) {
		case repickLoss:
			if rp.lastOld != nil && e.undoRepick() {
				return nil, nil, 0
			}
		case repickGain, repickFlat:
			rp.lastOld, rp.lastMore = nil, nil
		}
	}
	if !picked || !rp.pacer.allow(now, try) {
		return nil, nil, 0
	}
	w := rp.windows[pickPeer]
	var more []int // moved with pick
	if rp.early && !try && busy == 1 && rp.multis[pickPeer] < earlyMulti {
		if more = pickMore(w, rp.peaks[pickPeer], rp.p, pick, earlyMoves); len(more) > 0 {
			rp.multis[pickPeer]++
		}
	}
	rates := make([]float64, len(w))
	for i := range w {
		rates[i] = windowRate(w[i]) / rp.p.Sample.Seconds()
	}
	e.log.Info("mrtransport: paths behave as one", "peer", pickPeer, "path", pick, "try", try, "more", more, "bytesPerSecond", rates)
	rp.pacer.made(now, total, try)
	return append([]int{pick}, more...), nil, 0
}

// carried reports whether a connection's windows (windows[i]: path i's,
// oldest first) show data carried either way.
func carried(windows [][]pathSample) bool {
	for _, w := range windows {
		if len(w) >= 2 && (w[len(w)-1].Acked != w[0].Acked || w[len(w)-1].Recv != w[0].Recv) {
			return true
		}
	}
	return false
}

// crowdWait bounds, in the phase's intervals, how long a crowded path's
// move waits for its window of samples to fill again (the connection may
// carry nothing meanwhile): it is then kept.
const crowdWait = 4

// judgeCrowded judges the last crowded path's move (rp.crowd) once the
// path's window of samples is full again, undoing it if the path's share
// of the connection's median rate fell (crowdJudge), and reports whether
// it undid it. The caller holds eng.mu.
func (e *Endpoint) judgeCrowded(now time.Duration) (undone bool) {
	rp := e.repick
	c := &rp.crowd
	if !c.on {
		return false
	}
	w := rp.windows[c.peer]
	full := c.path < len(w) && len(w[c.path]) >= rp.p.CrowdedWindow
	if !full && now < c.at+crowdWait*rp.p.Interval {
		return false
	}
	after := 0.0
	if full {
		after = crowdScore(newest(w, rp.p.CrowdedWindow), c.path)
	}
	keep := crowdJudge(c.before, after)
	c.on = false
	rp.pacer.settle(keep)
	rp.crowdNext = now
	if keep {
		rp.lastOld, rp.lastMore, rp.crowdUndos, rp.crowdBackoff = nil, nil, 0, 0
		return false
	}
	// Moves undone flatRuns times in a row (as on one bottleneck, where
	// every path runs alike and noise names one) wait, doubling, from a
	// window's time up to MaxInterval.
	if rp.crowdUndos++; rp.crowdUndos >= flatRuns {
		rp.crowdUndos = 0
		rp.crowdBackoff = min(max(2*rp.crowdBackoff, time.Duration(rp.p.CrowdedWindow)*rp.p.Sample), rp.p.MaxInterval)
	}
	rp.crowdNext = now + rp.crowdBackoff
	return rp.lastOld != nil && e.undoRepick()
}

// peakHalfLife is how fast a connection's peak per-path rate is forgotten
// (the fabric's load changes).
const peakHalfLife = 10 * time.Second

// peakDecay is the factor applied to the peak every sample.
func peakDecay(sample time.Duration) float64 {
	return math.Exp2(-sample.Seconds() / peakHalfLife.Seconds())
}

// Repicks returns how many path ports this endpoint has re-picked
// (Config.Repick) and how many of those it undid because the send rate
// fell. Both are 0 where ports are not re-picked.
func (e *Endpoint) Repicks() (made, undone int64) {
	e.eng.lock()
	defer e.eng.unlock()
	if e.repick == nil {
		return 0, 0
	}
	return e.repick.count, e.repick.undone
}
