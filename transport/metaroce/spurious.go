package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// rtoUndo is what a path knows of its last retransmission timeout until
// an ACK tells whether it was right. A path's sequence numbers are never
// reused for a resend, so an ACK that covers the packet whose timer fired
// acknowledges its original transmission: the packet was not lost, the
// timer only ran ahead of the ACK (a sender or a receiver whose process
// was not scheduled on a loaded host, an ACK that waited in a socket, a
// round trip that grew past the RTO). Such a timeout is spurious (the
// detection of Eifel, RFC 3522, by sequence number instead of timestamp)
// and is counted in PathStats.SpuriousTimeouts.
//
// The timeout's response (window cut, packets moved, path suspect)
// stands; what the detection changes is the RTO that follows: on a short
// path the ACKs are known to come that late without a loss, and the RTO
// allows for it a while (see lateWindow). Restoring the window and the
// path's state on detection (Eifel's response) was tried: the figure
// tests TestTCPShare (loss-based flow 105 -> 184 % of its fair share,
// seed 1600) and, with the backoff reset too, TestFigureDelayRaisedMidRun
// (74 % of capacity after the RTT rise) then fail; see
// bench/results/spurious.md.
type rtoUndo struct {
	ok  bool
	seq uint64        // the oldest packet in flight at the first timeout
	due time.Duration // when the first timeout was due
	// late is how long after their timeouts were due the ACKs that proved
	// them spurious came, the longest over the last one to two
	// lateWindows, at most maxLate; the RTO adds it (path.baseRTO).
	late winMax
}

// How long a spurious timeout's lateness counts in the RTO, and its bound.
// The ACKs of a path come late when the peer's process or this one's
// reader was not scheduled: in the two-site lab (8 ranks on 2 cores), the
// LAN paths, of 18-900 us of fabric RTT, timed out 2-4 times a path in a
// 16 MiB job of 10 calls, 93-100 % of the timeouts spurious. A stall of a
// process stalls every path of its connections, so the lateness one path
// learns counts for its connection's other paths too (conn.shareLate). A
// timeout that was right (the packet lost) teaches nothing, so a path that
// really loses keeps its RTO; the bound keeps the wait for a tail loss
// after a stall within maxLate of what it was. Only a short path (base
// RTT under longAckRTT) learns it: there milliseconds of lateness are the
// hosts' scheduling, where on a long path a spurious timeout is also what
// a queue growing faster than the RTO gives (a loss-based flow filling
// the buffer), and allowing for it there kept MetaRoCE's windows up
// against such a flow (TestTCPShare: the loss-based flow at 81 % of its
// fair share against 112 %, 80 % the bound).
const (
	lateWindow = time.Second
	maxLate    = 20 * time.Millisecond
)

// noteTimeout records, before a timeout, the packet whose timer fired.
// Timeouts that follow one another with no ACK between them keep the
// record of the first. A timeout with nothing in flight records nothing.
func (p *path) noteTimeout() {
	if p.undo.ok || p.base >= p.next {
		return
	}
	p.undo.ok, p.undo.seq, p.undo.due = true, p.base, p.rtoAt
}

// checkUndo is run for each ACK block before it is applied, with end the
// ACK's arrival (less this endpoint's own stall since, Endpoint.ownWait):
// if the block covers the packet the timeouts declared lost first (it was
// in flight, never acknowledged before), they were spurious: it counts
// them, notes how late after the first timeout was due the ACK came
// (noteLate) and reports true. onBlock drops the record once an ACK
// acknowledges packets sent since without it (the loss was real).
func (p *path) checkUndo(blk *wire.AckBlock, end time.Duration) bool {
	p.noteLate(0, end) // the lateness ages with every ACK
	if !p.undo.ok || p.next-p.undo.seq >= wire.MaxSACKSpan {
		// A receiver gives up on a hole once it lies MaxSACKSpan below
		// the highest sequence number received: then an ACK beyond the
		// packet no longer proves it arrived.
		p.undo.ok = false
		return false
	}
	if !blk.Has(p.undo.seq) {
		return false
	}
	p.st.SpuriousTimeouts++
	p.undo.ok = false
	p.noteLate(end-p.undo.due, end)
	return true
}

// noteLate folds in, at now, that ACKs of the path came d after their
// timeout was due, at most maxLate (0 if d <= 0: this endpoint's own
// stall, which catchUp credits, made the timeout late, not the ACKs; 0 on
// a long path, which learns no lateness: see lateWindow). A sample of 0
// only ages what is known: a lateness is forgotten once samples have come
// two lateWindows after it.
func (p *path) noteLate(d, now time.Duration) {
	if p.rtt.base() >= longAckRTT {
		d = 0
	}
	p.undo.late.sample(min(max(d, 0), maxLate), now, lateWindow)
}

// lateness is what the RTO allows for ACKs that came late without a loss
// (rtoUndo.late).
func (p *path) lateness() time.Duration { return p.undo.late.value() }

// shareLate gives the lateness path from learnt at now to the
// connection's other short paths (noteLate): their ACKs wait on the same
// processes.
func (c *conn) shareLate(from *path, now time.Duration) {
	d := from.lateness()
	for _, p := range c.paths {
		if p != from {
			p.noteLate(d, now)
		}
	}
}
