package metaroce

import "github.com/gocoll/gocoll/transport/metaroce/wire"

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
// It is detection only: the timeout's response (window cut, packets moved,
// path suspect) stands. Restoring the window and the path's state on
// detection (Eifel's response) was tried: the figure tests TestTCPShare
// (loss-based flow 105 -> 184 % of its fair share, seed 1600) and, with
// the backoff reset too, TestFigureDelayRaisedMidRun (74 % of capacity
// after the RTT rise) then fail; see bench/results/spurious.md.
type rtoUndo struct {
	ok  bool
	seq uint64 // the oldest packet in flight at the first timeout
}

// noteTimeout records, before a timeout, the packet whose timer fired.
// Timeouts that follow one another with no ACK between them keep the
// record of the first. A timeout with nothing in flight records nothing.
func (p *path) noteTimeout() {
	if p.undo.ok || p.base >= p.next {
		return
	}
	p.undo = rtoUndo{ok: true, seq: p.base}
}

// checkUndo is run for each ACK block before it is applied: if the block
// covers the packet the timeouts declared lost first (it was in flight,
// never acknowledged before), they were spurious: it counts them and
// reports true. onBlock drops the record once an ACK acknowledges packets
// sent since without it (the loss was real).
func (p *path) checkUndo(blk *wire.AckBlock) bool {
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
	return true
}
