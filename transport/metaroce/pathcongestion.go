package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// A path's congestion signals: ECN, the fabric's delay against its
// target, and the queue the loss classifier reads (split from path.go).

// congestion applies the ECN and delay signals carried by an ACK.
func (p *path) congestion(blk *wire.AckBlock, sentAt, now time.Duration, cfg *Config) {
	if ce := blk.CE - p.ceSeen; ce != 0 && ce < 1<<31 {
		p.ceSeen = blk.CE
		p.congestedAt = now
		p.st.ECNEchoed += int64(ce)
		if p.win.onSignal(signalECN, sentAt, now, 0, p.bdp(now)) {
			p.skipUntil = now + p.rtt.srtt
		}
	}
	// The RTT may rise because the ACK came back on a slower path (an ACK
	// carries every path's block and takes one of them); the one-way delay
	// may rise because the clocks drift. Only both together are queueing
	// on the way out.
	// Both must have stood for half an RTT or more (rttEstimator.recent):
	// a round of slow start sends at twice the rate the path delivers and
	// queues half of it for a moment, which is no reason to leave slow
	// start at a fraction of the path's bandwidth-delay product.
	target := p.delayTarget(cfg)
	compete := p.competingAt(now)
	if compete && p.fab.has && p.ceil.rtt > 0 && p.fab.min > p.ceil.rtt-max(2*target, (p.ceil.rtt-p.fab.floorRTT())/competeSwing) {
		// A loss-based competitor drains the queue after each of its
		// losses (a sawtooth); one that stays full has many flows of a
		// few packets, all yielding to loss (paths of an incast that
		// compete since a latecomer overflowed it): compete no more.
		p.stopCompeting(now)
		compete = false
	}
	if cut := p.cutTarget(target); !compete && p.fab.has && p.fab.recent.value() > p.fab.min+cut && p.owd.queue() > cut {
		// Above propCutRTT of base RTT, or for a deep queue (other flows'
		// or many paths' standing in a shallow buffer), cut by what drains the queue and
		// a twentieth of the base more, if that is less than the fixed
		// cut: at a long RTT a queue of a few ms is a few per cent of the
		// window, and a cut of 15 % would leave the path idle for round
		// trips after. The margin empties the queue for a moment, so that
		// the minimum RTT is seen again: a cut to the minimum alone leaves
		// what the window grew meanwhile, and the windowed minimum creeps
		// up with it (by 11 ms in 4 s at 100 ms), until the buffer
		// overflows. A deep queue is drained at once, up to half the
		// window. The queue and the margin are the fabric's (path.fab),
		// the window they are taken from covers the full loop: the
		// fabric's recent RTT plus the endpoints' part of the smoothed
		// one (none without arrival times, where the factor is the
		// fabric's minimum less the margin over its recent RTT). The
		// fixed cut, too, takes its share only of the fabric's part of
		// the window: the endpoints' part is no queue.
		recent := p.fab.recent.value()
		loop := recent + max(p.rtt.srtt-p.fab.srtt, 0)
		factor := float64(loop-(recent-p.fab.min)-p.fab.min/drainMargin) / float64(loop)
		if p.fab.floorRTT() >= propCutRTT || recent-p.fab.floorRTT() > deepQueue*target {
			factor = max(factor, minDelayCut)
		} else if factor = cutFactor[signalDelay]; loop > recent {
			factor = 1 - (1-factor)*float64(recent)/float64(loop)
		}
		p.win.onSignal(signalDelay, sentAt, now, min(factor, maxDelayCut), p.bdp(now))
	} else if !compete && p.fab.has && (p.heavyCeiling(target, now) || p.fab.min > p.fab.floorRTT()+target) && p.ceil.near(p.fab.recent.value(), target, now) {
		p.win.onSignal(signalDelay, sentAt, now, 0, p.bdp(now))
	}
}

// maxDelayCut and minDelayCut bound the factor a delay signal cuts a
// path of at least propCutRTT of base RTT, or with a queue of more than
// deepQueue delay targets over the floor, by (at least 5 %, at most half); otherwise a
// path is cut by the fixed factor (cutFactor): at a few ms of RTT the
// hosts' scheduling jitter is a large part of it, and a cut in proportion
// to it drains the link (lab, 2 ms one way: 600 against 680 Mbit/s).
const (
	maxDelayCut = 0.95
	minDelayCut = 0.5
	propCutRTT  = 10 * time.Millisecond
	deepQueue   = 4
	drainMargin = 20
)

// maxDelayTarget caps the queueing delay a path's RTT-scaled delay target
// tolerates: buffers hold a bounded time of their rate (20 ms is common,
// and the lab's), not half of any RTT, and a target deeper than the
// buffer leaves only loss to signal congestion.
const maxDelayTarget = 5 * time.Millisecond

// delayTarget is how far the fabric's RTT may rise above its minimum
// before the window is cut: half the base loop (loopBase: the floor without
// arrival times; with them, the loop without the fabric's queue, so that
// the window that keeps the link busy while the endpoints read late may
// queue as much as it did before), at most maxDelayTarget, and at least
// Config.DelayTarget.
func (p *path) delayTarget(cfg *Config) time.Duration {
	return max(cfg.DelayTarget, min(p.loopBase()/2, maxDelayTarget))
}

// jitterScatter is how many times a path's scatter (the smoothed
// difference between successive RTT samples, see rttEstimator.scatter)
// its delay cut tolerates above the minimum, up to maxDelayTarget.
const jitterScatter = 4

// jitterMinRTT is the least base RTT (floor) of a path whose delay cut
// tolerates its scatter: the hosts' scheduling jitter of a millisecond or
// more matters at WAN and lab round trips; within a fabric of µs round
// trips the delay target alone keeps the queues short, and the scatter
// there is the ACKs' batching.
const jitterMinRTT = time.Millisecond

// cutTarget is the rise above the minimum that cuts the window (the
// first delay signal in congestion): the delay target, or, on a path of at
// least jitterMinRTT whose samples scatter (per-packet jitter: the hosts'
// scheduling, a delay line's lateness), jitterScatter times its scatter,
// at most maxDelayTarget. Jitter without reordering holds each packet
// behind a late one before it, so on a busy path it raises the recent
// minimum as a queue would (0-4 ms each way: by 4-5 ms at 4 ms of base
// RTT), and cuts every few round trips would keep the windows at a few
// packets, where 5 % random loss means timeouts. A queue of the path's own
// moves successive samples by about a packet's serialisation time, so it
// leaves the target as it was. Where the minimum stands above the floor
// by the target (other flows keep a queue, a loss-based competitor) the
// target is unchanged: the scatter there is the other flows' packets
// between ours, and tolerating it yields the link to them. The judgement
// of a loss (queueing) uses only whether it tolerates more than the
// target (the samples scatter as jitter's), not the tolerance; that of a
// competitor does not use it.
func (p *path) cutTarget(target time.Duration) time.Duration {
	if p.fab.floorRTT() < jitterMinRTT || p.fab.min > p.fab.floorRTT()+target {
		return target
	}
	return max(target, min(jitterScatter*p.fab.scatter, maxDelayTarget))
}

// queueing reports whether the path shows a queue, which makes a loss look
// like congestion rather than corruption or random drop: its RTT (the
// smoothed one; under per-packet jitter, the lower of that and the recent
// minimum, see below) and its smoothed one-way delay both above their
// floors by 3/4 of the deepest queue they showed lately (their peaks), and
// by the delay target (in slow start the queue is always at its deepest
// yet). A tail drop
// comes when the buffer is full, the queue at its deepest; a random loss
// at any depth, which the delay signal keeps within the delay target where
// the buffer holds more. A buffer kept full by other flows (TCP) is judged
// by its own depth; one shallower than the delay target (5 ms at most, see
// maxDelayTarget) is not seen.
//
// On a path whose samples scatter as per-packet jitter's do (its delay cut
// tolerates more than the delay target, see cutTarget), the RTT's recent
// minimum (over the last half to whole RTT) bounds it: a queue holds every
// packet, the fastest included, where jitter raises the mean but lets some
// packets through fast in every round trip. With 0-4 ms of jitter each way
// (no reordering) the smoothed RTT alone stood 3.5-5.3 ms above the floor
// of a 5.6 ms loop, over its delay target (2.8 ms), and, with no queue and
// so no sawtooth of delay cuts, near its peak too: half of a link's random
// losses at 5 % were taken for tail drops and cut by 0.7, both of the
// link's paths stayed at 3-8 packets and the link ran half idle
// (TestFigureJitterLoss's seeds 10 and 41: 82 % of capacity). Elsewhere
// the smoothed RTT alone: the recent minimum lags a rising queue, and in a
// staggered incast it hid tail drops (TestIncastStaggered: 2.9 % of the
// packets dropped, against 0.55 %). Nor is the delay cut's tolerance
// itself a remedy: it would hide the tail drops of a buffer shallower than
// 4 scatters, which a loss-based flow then keeps full (on a LAN of late
// reads, TestLANShareWithLossBased: MetaRoCE took 99 % of the link).
//
// The floors are long minima: against the short ones, a queue other flows
// keep full for longer than minWindow would look like none, and every tail
// drop like random loss (see rttEstimator.floor).
func (p *path) queueing(cfg *Config) bool {
	if !p.fab.has {
		return false
	}
	q, o, lo := p.fab.srtt-p.fab.floorRTT(), p.owd.smooth, p.delayTarget(cfg)
	if p.cutTarget(lo) > lo {
		q = min(p.fab.srtt, p.fab.recent.value()) - p.fab.floorRTT()
	}
	return q > max(p.fab.peak.value()*3/4, lo) && o > max(p.owd.peak.value()*3/4, lo)
}

// bdp returns what the path delivered in its last smoothed RTT, scaled to
// its base loop (loopBase): its bandwidth-delay product without the queue
// when it is the bottleneck's, or 0 when unknown.
func (p *path) bdp(now time.Duration) int {
	if !p.rtt.has {
		return 0
	}
	return int(p.dlv.rate(now, p.rtt.srtt) * p.loopBase().Seconds())
}

// loopBase is the full loop without the fabric's queue: the smoothed full
// RTT less the fabric's smoothed excess over its floor, at least the full
// RTT's floor. Without arrival times the two views are one and it is that
// floor; with them the full floor is the luckiest loop (both endpoints
// read at once), far below what the window must cover.
func (p *path) loopBase() time.Duration {
	return max(p.rtt.srtt-max(p.fab.srtt-p.fab.floorRTT(), 0), p.rtt.floorRTT())
}

// reorderThreshold is how many later packets on the same path must be
// acknowledged before a hole is a loss without waiting.
const reorderThreshold = 3

// detectLoss declares lost every in-flight packet older than the largest
// acknowledged one by reorderThreshold, or sent more than 9/8 RTT before
// now, plus the endpoints' hold (path.held); for the rest it arms the loss timer.
func (p *path) detectLoss(now time.Duration, cfg *Config, sink packetSink) {
	p.lossAt = 0
	if !p.hasLargest {
		return
	}
	delay := max(p.rtt.srtt, p.rtt.latest)*9/8 + p.held.value()
	for seq := p.base; seq < p.next && seq < p.largest; seq++ {
		rec := p.slot(seq)
		if !rec.inflight {
			continue
		}
		if p.largest-seq >= reorderThreshold || now-rec.sentAt >= delay {
			p.lr.count(0, 1, now, p.rtt.srtt)
			if rec.sentAt != p.lostTrain {
				p.countCompeting(0, 1, now) // a train's losses once
			}
			p.lostTrain = rec.sentAt
			if cut, factor := p.lossCut(cfg, now); cut && p.win.onSignal(signalLoss, rec.sentAt, now, factor, 0) {
				p.skipUntil = now + p.rtt.srtt
			}
			p.resolve(seq, false, sink)
			continue
		}
		if t := rec.sentAt + delay; p.lossAt == 0 || t < p.lossAt {
			p.lossAt = t
		}
	}
}

// loseAll declares every in-flight packet lost, as after a timeout.
func (p *path) loseAll(sink packetSink) {
	for seq := p.base; seq < p.next; seq++ {
		if p.slot(seq).inflight {
			p.noteTimedOut(seq)
			p.resolve(seq, false, sink)
		}
	}
	p.lossAt, p.rtoAt = 0, 0
}

// loseOldest declares the oldest in-flight packet lost, as a first
// timeout on a silent connection (lateack.go): the others stay in flight
// until the next timeout, due an RTO (backed off) from now.
func (p *path) loseOldest(now time.Duration, cfg *Config, sink packetSink) {
	p.noteTimedOut(p.base)
	p.resolve(p.base, false, sink)
	p.lossAt = 0
	p.rtoAt, p.rtoFrom = now+p.rto(cfg), now
}

// heardFrom brings a suspect, dead or skipped path back on any sign of life
// in the forward direction.
func (p *path) heardFrom() {
	if p.state == PathDead {
		p.win.reset(1)
	}
	if p.state == PathSuspect || p.state == PathDead {
		p.state = PathGood
		p.probes, p.probeAt, p.probeLow = 0, 0, 0
	}
}

// probeSent notes that a probe with nonce n left on the path.
func (p *path) probeSent(n uint64) {
	if p.probeLow == 0 {
		p.probeLow = n
	}
	p.probeNonce = n
}

// probeAnswered reports whether a reply echoing nonce n answers a probe
// of the path's current episode.
func (p *path) probeAnswered(n uint64) bool {
	return p.probeLow != 0 && n >= p.probeLow && n <= p.probeNonce
}

// refreshState turns skip back into good when its time is up.
func (p *path) refreshState(now time.Duration) {
	switch {
	case p.state == PathGood && now < p.skipUntil:
		p.state = PathSkip
	case p.state == PathSkip && now >= p.skipUntil:
		p.state = PathGood
	}
}

// onTimer handles the path's loss, retransmission and probe timers due at
// now. It reports whether a probe should be sent. silent says whether a
// timeout now would find the connection silent (conn.silentFor; see
// lateack.go's "A silent connection").
func (p *path) onTimer(now time.Duration, cfg *Config, sink packetSink, silent bool) (probe bool) {
	if p.lossAt != 0 && now >= p.lossAt {
		p.detectLoss(now, cfg, sink)
	}
	if p.rtoAt != 0 && now >= p.rtoAt {
		p.noteTimeout()
		p.st.Timeouts++
		p.backoff = min(p.backoff+1, maxBackoff)
		if p.backoff == 1 && p.next-p.base > 1 && silent {
			p.loseOldest(now, cfg, sink)
		} else {
			p.loseAll(sink)
		}
		p.win.onSignal(signalLoss, now, now, 0, 0)
		p.state, p.probes, p.probeAt, p.probeLow = PathSuspect, 0, now, 0
	}
	if p.probeAt == 0 || now < p.probeAt {
		return false
	}
	if p.probes >= cfg.DeadAfter && p.state == PathSuspect {
		p.state = PathDead
	}
	p.probes++
	p.probeAt = now + p.probeEvery(cfg)
	return true
}

// nextTimer returns the earliest of the path's timers, or 0.
func (p *path) nextTimer() time.Duration {
	t := time.Duration(0)
	for _, c := range []time.Duration{p.lossAt, p.rtoAt, p.probeAt} {
		if c != 0 && (t == 0 || c < t) {
			t = c
		}
	}
	return t
}
