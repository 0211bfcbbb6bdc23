package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Late ACKs of packets a timeout gave up on. A retransmission timeout
// declares every packet in flight on its path lost (loseAll) and queues
// their pieces for resending. When the timeout was spurious (the ACKs were
// late, not the packets lost: a peer that was not scheduled for longer
// than the RTO, or its ACKs held in a queue), the ACKs that then arrive
// cover those packets; their pieces that still wait in the resend queue
// (the connection's other paths timed out too, or had no room) are taken
// out of it and count as delivered, and the path, which delivered after
// all, is good again, instead of resending data that arrived (in the
// two-site lab on a loaded machine, nearly every timeout was spurious and
// their resends were 5 % of the WAN's bytes). What was resent already
// stays resent. Only the packets of the last timeouts are looked for, and
// only until an ACK acknowledges a packet sent since (the late ACKs come
// first), within the ring's memory of them.
type rtoLost struct {
	lo, hi uint64 // sequence numbers the timeouts declared lost: [lo, hi)
}

// lateAckSink is a packetSink that can take back a resend.
type lateAckSink interface {
	packetSink
	// packetLateAcked reports that rec, declared lost by a timeout, was
	// acknowledged after all; the sink drops its resend if it has not
	// gone yet and reports whether it did.
	packetLateAcked(rec *sentPacket) bool
}

// noteTimedOut records, in loseAll, that the timeout declares seq lost.
func (p *path) noteTimedOut(seq uint64) {
	p.slot(seq).timedOut = true
	if p.lost.hi <= p.lost.lo {
		p.lost.lo = seq
	}
	p.lost.hi = seq + 1
}

// lateAcks runs for each ACK block before it is applied: every packet of
// the last timeouts the block covers is taken back from the resend queue
// if still there; it returns how many were.
func (p *path) lateAcks(blk *wire.AckBlock, sink packetSink) int {
	if p.lost.hi <= p.lost.lo {
		return 0
	}
	ls, ok := sink.(lateAckSink)
	if !ok {
		return 0
	}
	lo := p.lost.lo
	if n := uint64(len(p.ring)); p.next > n {
		lo = max(lo, p.next-n) // older slots hold newer packets now
	}
	taken := 0
	for seq := lo; seq < p.lost.hi && seq < p.base; seq++ {
		rec := p.slot(seq)
		if !rec.timedOut || !blk.Has(seq) {
			continue
		}
		rec.timedOut = false
		if ls.packetLateAcked(rec) {
			taken++
		}
	}
	return taken
}

// packetLateAcked takes rec's piece out of the resend queue, if it waits
// there, and settles it.
func (s *sender) packetLateAcked(rec *sentPacket) bool {
	m := s.msgs[rec.msgSeq]
	if m == nil || m.aborted {
		return false
	}
	for i := s.rtxHead; i < len(s.rtx); i++ {
		pc := &s.rtx[i]
		if !pc.gone && pc.msgSeq == rec.msgSeq && pc.offset == rec.offset && pc.length == rec.length && pc.flags&wire.FlagAbort == 0 {
			pc.gone = true
			s.settle(m)
			return true
		}
	}
	return false
}

// A silent connection. When a path times out while another path of the
// connection also waits overdue for the ACK of a packet in flight, and no
// path has had a packet acknowledged since the ACK of the timing-out
// path's oldest packet was due, the silence is the connection's, not the
// path's: the peer is not answering (not scheduled, or its ACKs held in a
// queue) or every path failed at once; either way, resending every packet
// of the path elsewhere does not help (no other path is heard from
// either), and when the ACKs were only late it resends what arrived. The
// first such timeout then declares only the oldest packet lost (resent as
// a probe of the data's fate), keeps the others in flight and times out
// again an RTO (backed off) later, when, the silence lasting, it declares
// the rest lost as any timeout does. A path that times out alone (the
// others acknowledged, or with nothing in flight) loses all its packets at
// once, as before, so that a failed path's data moves to the paths that
// work without waiting.

// silentFor reports whether a timeout of p at now finds the connection
// silent: no path had a packet acknowledged since the ACK of p's oldest
// packet in flight was due (its send plus p's smoothed RTT: an ACK of an
// earlier packet may come in that time), and another path's oldest
// packet in flight is overdue too (sent more than its path's smoothed RTT
// before now).
func (c *conn) silentFor(p *path, now time.Duration) bool {
	if p.base >= p.next {
		return false
	}
	due := p.slot(p.base).sentAt + p.rtt.srtt
	others := false
	for _, q := range c.paths {
		if q.ackedAt > due {
			return false
		}
		if q != p && q.base < q.next && now-q.slot(q.base).sentAt > q.rtt.srtt {
			others = true
		}
	}
	return others
}
