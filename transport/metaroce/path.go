package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// PathState is a path's health as its sender sees it.
type PathState uint8

const (
	// PathGood carries data normally.
	PathGood PathState = iota
	// PathSkip saw congestion (ECN-CE or loss) within the last RTT; the
	// scheduler uses it only when no good path has room.
	PathSkip
	// PathSuspect timed out: its packets were moved to other paths and it
	// carries only probes until one is answered.
	PathSuspect
	// PathDead left DeadAfter probes unanswered; it is probed every
	// ProbeInterval and comes back when a probe is answered.
	PathDead
)

func (s PathState) String() string {
	switch s {
	case PathGood:
		return "good"
	case PathSkip:
		return "skip"
	case PathSuspect:
		return "suspect"
	case PathDead:
		return "dead"
	}
	return "unknown"
}

// sentPacket is the sender's record of one DATA packet on a path.
type sentPacket struct {
	sentAt   time.Duration
	msgSeq   uint64
	offset   uint64
	length   int32 // payload bytes
	size     int32 // datagram bytes, counted in the window
	flags    uint8 // wire.Flag* bits of the piece
	inflight bool
}

// maxRing bounds a path's unresolved packets: sequence numbers from the
// oldest unresolved one to the next one span at most this many, so that
// the receiver never gives up on a hole the sender has not resolved (see
// wire.MaxSACKSpan). The ring holding them starts at minRing entries and
// doubles as the window needs, so a path's memory follows its
// bandwidth-delay product (at most 16384 x 40 bytes).
const (
	maxRing = wire.MaxSACKSpan
	minRing = wire.BitmapBits
)

// path is one path of a connection: the sending side's sequence space,
// window and health, and the receiving side's SACK state.
type path struct {
	undo  rtoUndo // what the last retransmission timeouts changed (spurious.go)
	idx   uint8
	state PathState
	// rtt is the full round trip, as the endpoints live it: from the
	// packet's send to the ACK's hand-over to the core, less at most the
	// peer's own hold (fullSample). It sizes everything that must cover
	// the real loop: the RTO, the loss timer, the window's growth, the
	// bandwidth-delay product, pacing, the ACK hold, the choice of path.
	rtt rttEstimator
	// fab is the fabric's round trip: from the packet's send to the ACK's
	// arrival in our socket, less the peer's Delay (counted from the
	// DATA's arrival in its socket), so without either endpoint's
	// scheduling delay when the driver gives arrival times (see "Arrival
	// times" in the package documentation; without them it is rtt). It
	// feeds only the delay signal: the delay cut's recent-against-minimum
	// comparison (its recent minimum over half the full loop), the queue
	// the delay target is held against (loopBase), the loss classifier's
	// queue, the ceiling. Two views, as Swift's fabric and endpoint delays: a busy
	// host's late reads are no queue, but a window sized by the fabric's
	// delay alone would not cover the loop, nor an RTO time it.
	fab rttEstimator
	owd owdTracker
	// held is the longest the endpoints held an ACK of new packets over
	// the last one to two minWindows: the block's Delay (the peer's hold,
	// from the DATA's arrival in its socket, so with its scheduling delay
	// when the driver gives arrival times) plus the time the ACK waited in
	// our socket (now less its arrival), at most maxEndpointHold. It is
	// what the holds actually are, whatever RTT the peer judges its own
	// by; the RTO and the loss timer allow for it above the full RTT,
	// whose samples each hold only one loop's lateness: in the lab (site
	// connection, 8 paths) the RTO without it timed out spuriously about
	// as often as before arrival times (1874 timeouts against swift15's
	// 207 with it).
	held winMax
	win  window
	dlv  delivery
	lr   lossRounds
	ceil lossCeiling
	// competeUntil is when the path stops competing with a loss-based
	// flow (see competingAt).
	competeUntil time.Duration
	// noCompeteUntil holds the path out of competing after it lost too
	// much while competing; compAcked and compLost count its packets since
	// it began to (see countCompeting).
	noCompeteUntil      time.Duration
	compAcked, compLost int
	standingLossAt      time.Duration // the last congestion loss under a standing queue, not competing; 0: none
	// fell is set when an RTT sample fell below the minimum (fellBelow),
	// for the connection to join a drain (see drainEvery).
	fell bool

	ring       []sentPacket // packet seq at seq mod len(ring); len a power of two
	base, next uint64       // oldest unresolved and next sequence number
	inflight   int          // datagram bytes of in-flight packets
	largest    uint64       // highest sequence number acknowledged
	hasLargest bool
	lossAt     time.Duration // when an early-acked hole turns into a loss; 0: none
	rtoAt      time.Duration // when the in-flight packets time out; 0: none
	skipUntil  time.Duration
	ceSeen     uint32 // the receiver's CE count at the last ACK
	backoff    uint8  // the RTO doubles per timeout without an ACK between, up to 2^maxBackoff

	// Probing while suspect or dead.
	probes  int           // unanswered probes
	probeAt time.Duration // next probe; 0: none
	// probeLow and probeNonce are the first and the last nonce of the
	// probes sent since the path last changed state; a reply to any of
	// them counts (probeLow 0: none sent).
	probeLow, probeNonce uint64

	recv recvPath
	st   PathStats
}

// newPath returns path idx of a connection with n paths, whose initial
// window is its part of the connection's.
func newPath(idx, n int, cfg *Config, mss int) *path {
	return &path{
		idx: uint8(idx),
		rtt: newRTT(cfg.InitialRTT),
		fab: newRTT(cfg.InitialRTT),
		win: newWindow(mss, max(1, cfg.InitialWindow/n), maxWindowPkts, n),
	}
}

// slot returns the record of sequence number seq.
func (p *path) slot(seq uint64) *sentPacket { return &p.ring[seq%uint64(len(p.ring))] }

// grow doubles the ring (or makes the first), keeping [base, next).
func (p *path) grow() {
	old := p.ring
	p.ring = make([]sentPacket, max(minRing, 2*len(old)))
	for seq := p.base; seq < p.next; seq++ {
		*p.slot(seq) = old[seq%uint64(len(old))]
	}
}

// maxBackoff bounds the RTO's exponential backoff.
const maxBackoff = 6

// rto returns the path's retransmission timeout: baseRTO doubled for each
// timeout since the last ACK of new data, at most MaxRTO unless baseRTO
// alone is longer.
func (p *path) rto(cfg *Config) time.Duration {
	base := p.baseRTO(cfg)
	return min(base<<p.backoff, max(cfg.MaxRTO, base))
}

// baseRTO is the RTO before backoff: srtt + 4 rttvar + the peer's ACK
// hold (peerHold: ackHold, AckDelay below 1 ms, or the longest seen), at least
// MinRTO (rttEstimator.rto); before the path's own first sample, at least
// initialRTO too (or MaxRTO if lower), since its RTT is seeded from the
// handshake on another path, which may be far shorter.
func (p *path) baseRTO(cfg *Config) time.Duration {
	lo := cfg.MinRTO
	if !p.rtt.has {
		lo = max(lo, min(initialRTO, cfg.MaxRTO))
	}
	return p.rtt.rto(lo, p.peerHold(cfg))
}

// peerHold is how long the peer may hold an ACK of this path's packets:
// the hold its RTT calls for (ackHold), or the longest seen lately if
// more. A receiver judges its hold by its own view of the RTT, which on
// a side that only receives is the handshake's and may be far longer than
// the RTT this side measures.
func (p *path) peerHold(cfg *Config) time.Duration {
	return max(ackHold(cfg, p.rtt.base()), p.held.value())
}

// initialRTO is the least RTO of a path without an RTT sample of its own,
// as RFC 6298's initial RTO.
const initialRTO = time.Second

// deadProbeBackoff bounds the doubling of a dead path's probe interval.
const deadProbeBackoff = 3

// probeEvery returns the time from a probe to the next on a suspect or
// dead path: one RTO (before backoff) while suspect, so that the
// DeadAfter probes each get a full RTO to be answered; for a dead path
// ProbeInterval, at least an RTO, doubled for each unanswered probe up to
// 2^deadProbeBackoff times. A reply to any probe of the episode revives
// the path, however late.
func (p *path) probeEvery(cfg *Config) time.Duration {
	rto := p.baseRTO(cfg)
	if p.state != PathDead {
		return rto
	}
	k := min(max(p.probes-cfg.DeadAfter-1, 0), deadProbeBackoff)
	return max(cfg.ProbeInterval, rto) << k
}

// usable reports whether data may be scheduled on the path.
func (p *path) usable() bool { return p.state == PathGood || p.state == PathSkip }

// room returns how many more datagram bytes the window allows, or -1 if the
// path cannot take a packet now.
func (p *path) room() int {
	if !p.usable() || p.next-p.base >= maxRing {
		return -1
	}
	return p.win.cwnd - p.inflight
}

// onSent records a DATA packet sent with sequence number seq = p.next.
func (p *path) onSent(rec sentPacket, now time.Duration, cfg *Config) uint64 {
	seq := p.next
	rec.inflight = true
	if seq-p.base >= uint64(len(p.ring)) {
		p.grow()
	}
	*p.slot(seq) = rec
	p.next++
	p.inflight += int(rec.size)
	if p.rtoAt == 0 {
		p.rtoAt = now + p.rto(cfg)
	}
	p.st.PacketsSent++
	p.st.BytesSent += int64(rec.length)
	if rec.flags&wire.FlagRetransmit != 0 {
		p.st.Retransmits++
	}
	return seq
}

// packetSink receives the outcome of a path's packets.
type packetSink interface {
	packetAcked(rec *sentPacket)
	packetLost(rec *sentPacket)
}

// resolve takes seq out of flight as acknowledged or lost and moves base
// past resolved packets.
func (p *path) resolve(seq uint64, acked bool, sink packetSink) {
	rec := p.slot(seq)
	rec.inflight = false
	p.inflight -= int(rec.size)
	if acked {
		p.st.PacketsAcked++
		sink.packetAcked(rec)
	} else {
		p.st.PacketsLost++
		sink.packetLost(rec)
	}
	for p.base < p.next && !p.slot(p.base).inflight {
		p.base++
	}
}

// fullSample is the full RTT sample of block blk of an ACK handed over at
// now: now less the Echo, less the block's Delay up to the most a receiver
// holds an ACK after reading the DATA (maxPeerHold). The rest of the Delay
// is the time the DATA waited in the peer's socket (its scheduling delay,
// with arrival times), which the loop includes; so does the time the ACK
// waited in ours. Without arrival times and with timers on time the Delay
// never exceeds the hold and the sample is the fabric's.
func fullSample(blk *wire.AckBlock, now time.Duration, cfg *Config) time.Duration {
	return now - blk.Echo - min(blk.Delay, maxPeerHold(cfg))
}

// maxPeerHold is the longest a receiver holds an ACK after reading the
// DATA, whatever RTT it judges by (ackHold's range).
func maxPeerHold(cfg *Config) time.Duration { return max(cfg.AckDelay, maxAckHold) }

// onBlock processes an ACK block for this path, of an ACK the receiver
// sent at ackSent on its clock and that arrived here at at (<= now: the end
// of the fabric's RTT sample; now ends the full one): it takes
// acknowledged packets out of flight, samples both RTTs and the one-way
// delay, reacts to new CE marks and rising delay, and detects losses.
func (p *path) onBlock(blk *wire.AckBlock, ackSent, now, at time.Duration, cfg *Config, sink packetSink) {
	p.checkUndo(blk)
	newly, before := 0, p.inflight
	var newestSent time.Duration = -1
	packets := 0
	ack := func(seq uint64) {
		rec := p.slot(seq)
		if !rec.inflight || !blk.Has(seq) {
			return
		}
		newly += int(rec.size)
		packets++
		newestSent = max(newestSent, rec.sentAt)
		if !p.hasLargest || seq > p.largest {
			p.largest, p.hasLargest = seq, true
		}
		p.resolve(seq, true, sink)
	}
	// Only what the block covers: below Cum, and the bitmap.
	for seq, end := p.base, min(blk.Cum, p.next); seq < end; seq++ {
		ack(seq)
	}
	start := max(blk.Start(), p.base)
	for seq, end := start, min(blk.Start()+wire.BitmapBits, p.next); seq < end; seq++ {
		ack(seq)
	}
	if newly == 0 {
		return
	}
	p.undo.ok = false // packets sent since the timeout, not its own
	p.backoff = 0
	p.heardFrom()
	p.held.sample(min(max(blk.Delay, 0)+now-at, maxEndpointHold), now, minWindow)
	if s := at - blk.Echo - blk.Delay; blk.Echo <= at {
		p.fell = p.fell || p.fellBelow(s, cfg)
		p.fab.sampleSpan(s, now, p.rtt.srtt)
		p.rtt.sample(fullSample(blk, now, cfg), now)
	}
	p.owd.sample(ackSent-blk.Delay-blk.Echo, now, p.rtt.srtt)
	p.dlv.onAck(newly, now, p.rtt.srtt)
	p.lr.count(packets, 0, now, p.rtt.srtt)
	p.countCompeting(packets, 0, now)
	p.congestion(blk, newestSent, now, cfg)
	if 2*before >= p.win.cwnd {
		// Grown only while it limits the sender (as Linux's
		// tcp_is_cwnd_limited): a window grown while the application
		// sent less would let out a burst the path has never carried.
		p.win.onAck(newly, p.rtt.srtt)
	}
	p.st.BytesAcked += int64(newly)
	p.detectLoss(now, cfg, sink)
	p.rtoAt = 0
	if p.inflight > 0 {
		p.rtoAt = now + p.rto(cfg)
	}
}

// congestion applies the ECN and delay signals carried by an ACK.
func (p *path) congestion(blk *wire.AckBlock, sentAt, now time.Duration, cfg *Config) {
	if ce := blk.CE - p.ceSeen; ce != 0 && ce < 1<<31 {
		p.ceSeen = blk.CE
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
	} else if !compete && p.fab.has && (p.ceil.heavyAt(now) || p.fab.min > p.fab.floorRTT()+target) && p.ceil.near(p.fab.recent.value(), target, now) {
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
// of a loss (queueing) and of a competitor do not use it.
func (p *path) cutTarget(target time.Duration) time.Duration {
	if p.fab.floorRTT() < jitterMinRTT || p.fab.min > p.fab.floorRTT()+target {
		return target
	}
	return max(target, min(jitterScatter*p.fab.scatter, maxDelayTarget))
}

// queueing reports whether the path shows a queue, which makes a loss look
// like congestion rather than corruption or random drop: its smoothed RTT
// and one-way delay both above their floors by 3/4 of the deepest queue
// they showed lately (their peaks), and by the delay target (in slow start
// the queue is always at its deepest yet). A tail drop
// comes when the buffer is full, the queue at its deepest; a random loss
// at any depth, which the delay signal keeps within the delay target where
// the buffer holds more. A buffer kept full by other flows (TCP) is judged
// by its own depth; one shallower than the delay target (5 ms at most, see
// maxDelayTarget) is not seen.
//
// The floors are long minima: against the short ones, a queue other flows
// keep full for longer than minWindow would look like none, and every tail
// drop like random loss (see rttEstimator.floor).
func (p *path) queueing(cfg *Config) bool {
	if !p.fab.has {
		return false
	}
	q, o, lo := p.fab.srtt-p.fab.floorRTT(), p.owd.smooth, p.delayTarget(cfg)
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
			p.countCompeting(0, 1, now)
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
			p.resolve(seq, false, sink)
		}
	}
	p.lossAt, p.rtoAt = 0, 0
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
// now. It reports whether a probe should be sent.
func (p *path) onTimer(now time.Duration, cfg *Config, sink packetSink) (probe bool) {
	if p.lossAt != 0 && now >= p.lossAt {
		p.detectLoss(now, cfg, sink)
	}
	if p.rtoAt != 0 && now >= p.rtoAt {
		p.noteTimeout()
		p.st.Timeouts++
		p.backoff = min(p.backoff+1, maxBackoff)
		p.loseAll(sink)
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
