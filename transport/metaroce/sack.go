package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Bounds of a receiving path's bitmap, in 64-bit words: it starts small
// and doubles as the sequence numbers in flight need, up to
// wire.MaxSACKSpan bits (2 KiB), so that a path's memory follows its
// bandwidth-delay product.
const (
	recvMinWords = 2 * wire.BitmapBits / 64
	recvMaxWords = wire.MaxSACKSpan / 64
)

// recvPath is the receiver's record of one path's sequence space.
type recvPath struct {
	// cum is the lowest sequence number neither received nor given up on;
	// top is one above the highest received (0: none). Sequence number q
	// in [cum, cum+64 len(bits)) is received if bit q mod 64 len(bits) of
	// the ring bits is set; every bit of a number below cum is clear.
	cum, top uint64
	bits     []uint64
	// echo is the SentAt of the packet that arrived last, at echoAt, moved
	// on by how long it arrived after its burst's head (see burstEcho).
	echo, echoAt time.Duration
	// burst is the SentAt of the burst the last arrival belongs to: the
	// packets that left the sender at one instant (a train, train.go),
	// whose first arrival, the head, came at headAt.
	burst, headAt time.Duration
	// fwd is the smoothed (gain 1/8) one-way delay of arrivals: arrival
	// time less SentAt, so it holds the offset between the two clocks,
	// which is the same for every path of a connection and cancels when
	// paths are compared (see conn.ackPathFor).
	fwd     time.Duration
	ce      uint32 // CE-marked packets received, mod 2^32
	unacked int    // packets received since the last ACK
	bursts  int    // bursts whose head was received since the last ACK
	gap     bool   // a packet arrived out of order since the last ACK
	// repeat is how many more ACKs report the path (see ackRepeats).
	repeat int
	// gapTop is one above the newest packet that arrived beyond a hole.
	gapTop   uint64
	received int64
	dups     int64
}

// receive records seq and reports whether it is new. A sequence number
// wire.MaxSACKSpan or more ahead of cum gives up on the holes that far
// behind it: the sender has resolved those already (see wire.MaxSACKSpan).
func (r *recvPath) receive(seq uint64, sentAt, now time.Duration, ce bool) bool {
	if ce {
		r.ce++
	}
	if r.seen(seq) {
		r.dups++
		r.repeat = ackRepeats
		return false
	}
	if seq-r.cum >= wire.MaxSACKSpan {
		r.advance(seq - wire.MaxSACKSpan + 1)
	}
	for seq-r.cum >= r.span() {
		r.grow()
	}
	if seq != r.top {
		r.gap = true // a new hole below seq, or a late packet filling one
	}
	if seq > r.top {
		r.gapTop = seq + 1
	}
	r.top = max(r.top, seq+1)
	r.set(seq)
	for r.has(r.cum) {
		r.clear(r.cum)
		r.cum++
	}
	r.echo, r.echoAt = r.burstEcho(sentAt, now), now
	if r.received == 0 {
		r.fwd = now - r.echo
	} else {
		r.fwd += (now - r.echo - r.fwd) / 8
	}
	r.unacked++
	r.received++
	r.repeat = 1
	if r.cum < r.top && r.top-r.gapTop < wire.BitmapBits {
		// A hole among the newest arrivals, which the bitmap reports:
		// its SACK news is worth a second ACK.
		r.repeat = ackRepeats
	}
	return true
}

// burstEcho returns the SentAt an ACK echoes for a new packet sent at
// sentAt that arrived at now: sentAt moved on by the time since its
// burst's head arrived, if it left with the packet before it (the same
// SentAt: a train, or what one poll let out at one instant), else sentAt,
// the packet being a new burst's head. A burst queues behind itself, its
// k-th packet behind k-1 of its own serialisations at the bottleneck; so
// every RTT and one-way delay sample (path.onBlock) reads the head's
// delay, and a train of any length shows the queue others keep, not the
// one it makes of itself for an instant. It also counts the bursts.
func (r *recvPath) burstEcho(sentAt, now time.Duration) time.Duration {
	if r.received > 0 && sentAt == r.burst {
		return sentAt + now - r.headAt
	}
	r.burst, r.headAt = sentAt, now
	r.bursts++
	return sentAt
}

// ackRepeats is how many ACKs report a path after it last received a
// packet while it has a hole among its newest wire.BitmapBits arrivals (a
// sequence number there missing), or a duplicate; after an arrival in
// order, one ACK does: an ACK carries the blocks of those paths only, not
// of every path that ever received (conn.buildAck), so that at a WAN's
// packet rates, where an ACK follows about every packet, it carries one or
// two blocks of 61 bytes, not eight (a 531-byte ACK per 8972-byte datagram
// was 4 % of the bytes the other way in the two-site lab's simulation;
// bench/results/wan_overhead.md). A lost ACK's news of an in-order path
// comes with the path's next arrival (its cumulative number covers it);
// the SACK news of a path with a hole is repeated, as loss recovery waits
// on it (one report only failed TestFigureJitterLoss's 5 % loss row). A
// path whose last ACKs were all lost is reported again once its sender's
// timeout resends into it (the duplicate makes the path due once more),
// or, where that timeout was the connection's silence, its late ACKs are
// taken as they come (lateack.go).
const ackRepeats = 2

func (r *recvPath) span() uint64 { return uint64(len(r.bits)) * 64 }

func (r *recvPath) has(q uint64) bool {
	if len(r.bits) == 0 {
		return false
	}
	i := q % r.span()
	return r.bits[i/64]&(1<<(i%64)) != 0
}

func (r *recvPath) set(q uint64) {
	i := q % r.span()
	r.bits[i/64] |= 1 << (i % 64)
}

func (r *recvPath) clear(q uint64) {
	i := q % r.span()
	r.bits[i/64] &^= 1 << (i % 64)
}

// grow doubles the ring, keeping the bits of [cum, top).
func (r *recvPath) grow() {
	old := *r
	r.bits = make([]uint64, max(recvMinWords, 2*len(old.bits)))
	for q := r.cum; q < r.top; q++ {
		if old.has(q) {
			r.set(q)
		}
	}
}

// advance gives up on every hole below to.
func (r *recvPath) advance(to uint64) {
	if to-r.cum >= r.span() {
		clear(r.bits)
	} else {
		for ; r.cum < to; r.cum++ {
			r.clear(r.cum)
		}
	}
	r.cum = to
	for r.has(r.cum) {
		r.clear(r.cum)
		r.cum++
	}
}

// seen reports whether seq was received already (or given up on).
func (r *recvPath) seen(seq uint64) bool {
	return seq < r.cum || (seq-r.cum < r.span() && r.has(seq))
}

// word returns the 64 bits for sequence numbers q to q+63, which lie
// within [cum, cum+span).
func (r *recvPath) word(q uint64) uint64 {
	n := uint64(len(r.bits))
	i := q % r.span()
	w, off := i/64, i%64
	v := r.bits[w] >> off
	if off != 0 {
		v |= r.bits[(w+1)%n] << (64 - off)
	}
	return v
}

// block fills the ACK block for this path at time now: the bitmap covers
// the 256 sequence numbers above cum or, if the highest received lies
// further up, the 256 up to it.
func (r *recvPath) block(path uint8, now time.Duration, blk *wire.AckBlock) {
	blk.Path, blk.Cum, blk.CE, blk.Skip = path, r.cum, r.ce, 0
	start := r.cum + 1
	if r.top > start+wire.BitmapBits {
		start = r.top - wire.BitmapBits
		blk.Skip = uint32(start - r.cum - 1)
	}
	for w := range blk.Bitmap {
		blk.Bitmap[w] = 0
		if len(r.bits) > 0 {
			blk.Bitmap[w] = r.word(start + uint64(w)*64)
		}
	}
	blk.Echo, blk.Delay = r.echo, now-r.echoAt
	r.unacked, r.bursts, r.gap = 0, 0, false
	r.repeat = max(r.repeat-1, 0)
}

// due reports whether an ACK built now reports the path: it received a
// packet since the last ACK, or within the last ackRepeats ACKs.
func (r *recvPath) due() bool { return r.received > 0 && (r.unacked > 0 || r.gap || r.repeat > 0) }
