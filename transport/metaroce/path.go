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
	timedOut bool // declared lost by a timeout, its late ACK not yet seen (lateack.go)
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
	undo rtoUndo // what the last retransmission timeouts changed (spurious.go)
	lost rtoLost // the packets the last timeouts declared lost (lateack.go)
	// ackedAt is when an ACK last acknowledged a packet of the path.
	ackedAt time.Duration
	idx     uint8
	state   PathState
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
	rtoFrom    time.Duration // when rtoAt was armed
	lastSentAt time.Duration // the SentAt of the last DATA packet (conn.sentAtFor)
	lostTrain  time.Duration // the SentAt of the last packet detectLoss declared lost
	// firstRTO is the least RTO while the path has no RTT sample of its
	// own, set by the connection from its other paths (refreshFirstRTO);
	// 0: initialRTO (or MaxRTO if lower).
	firstRTO  time.Duration
	skipUntil time.Duration
	ceSeen    uint32 // the receiver's CE count at the last ACK
	// congestedAt is when the path last took an ECN mark or a loss for
	// congestion (0: never); see path.congested.
	congestedAt time.Duration
	backoff     uint8 // the RTO doubles per timeout without an ACK between, up to 2^maxBackoff

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
// hold (peerHold: ackHold, AckDelay below 1 ms, or the longest seen) + the
// lateness spurious timeouts showed lately (path.lateness), at least
// MinRTO (rttEstimator.rto); before the path's own first sample, at least
// firstRTO too: initialRTO (or MaxRTO if lower) until another path of the
// connection has a sample, then a few times the longest RTO measured
// (conn.refreshFirstRTO), since its RTT is seeded from the handshake on
// another path, which may be far shorter.
func (p *path) baseRTO(cfg *Config) time.Duration {
	lo := cfg.MinRTO
	if !p.rtt.has {
		first := p.firstRTO
		if first == 0 {
			first = min(initialRTO, cfg.MaxRTO)
		}
		lo = max(lo, first)
	}
	return p.rtt.rto(lo, p.peerHold(cfg)+p.lateness())
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
		p.rtoAt, p.rtoFrom = now+p.rto(cfg), now
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
// now (end: now less the time the ACK waited while this endpoint was not
// running, Endpoint.ownWait): end less the Echo, less the block's Delay up
// to the most a receiver holds an ACK after reading the DATA
// (maxPeerHold). The rest of the Delay is the time the DATA waited in the
// peer's socket (its scheduling delay, with arrival times), which the loop
// includes; so does the time the ACK waited in ours while this endpoint
// ran (a reader's lateness), but not a stall of its own. Without arrival
// times and with timers on time the Delay never exceeds the hold and the
// sample is the fabric's.
func fullSample(blk *wire.AckBlock, end time.Duration, cfg *Config) time.Duration {
	return end - blk.Echo - min(blk.Delay, maxPeerHold(cfg))
}

// maxPeerHold is the longest a receiver holds an ACK after reading the
// DATA, whatever RTT it judges by (ackHold's range).
func maxPeerHold(cfg *Config) time.Duration { return max(cfg.AckDelay, maxAckHold) }

// onBlock processes an ACK block for this path, of an ACK the receiver
// sent at ackSent on its clock and that arrived here at at (<= now: the end
// of the fabric's RTT sample; end, between at and now, ends the full one
// and the endpoint's hold: now less the time this endpoint was not running
// since at, Endpoint.ownWait): it takes
// acknowledged packets out of flight, samples both RTTs and the one-way
// delay, reacts to new CE marks and rising delay, and detects losses.
func (p *path) onBlock(blk *wire.AckBlock, ackSent, now, at, end time.Duration, cfg *Config, sink packetSink) {
	p.checkUndo(blk, end)
	if p.lateAcks(blk, sink) > 0 {
		p.heardFrom() // it delivered: the timeout was the ACKs' lateness
	}
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
	p.undo.ok = false  // packets sent since the timeout, not its own
	p.lost = rtoLost{} // and their late ACKs came before this one
	p.ackedAt = now
	p.backoff = 0
	p.heardFrom()
	p.held.sample(min(max(blk.Delay, 0)+end-at, maxEndpointHold), now, minWindow)
	if s := at - blk.Echo - blk.Delay; blk.Echo <= at {
		p.fell = p.fell || p.fellBelow(s, cfg)
		p.fab.sampleSpan(s, now, p.rtt.srtt)
		p.rtt.sample(fullSample(blk, end, cfg), now)
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
		p.win.onAck(newly, p.rtt.srtt, !p.congested(now))
	}
	p.st.BytesAcked += int64(newly)
	p.detectLoss(now, cfg, sink)
	p.rtoAt = 0
	if p.inflight > 0 {
		p.rtoAt, p.rtoFrom = now+p.rto(cfg), now
	}
}
