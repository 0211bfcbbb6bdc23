package collective

import (
	"bytes"
	"fmt"
)

// A board call's writes and reads of the slots: boardPublish writes this
// rank's, boardRead reads a member's, parseBoardHeader checks a slot's
// header (moved from boardwait.go unchanged).

// boardPublish writes this call's header and data into slot s of this
// rank's board, once every member has read what this rank last wrote
// there (its ack of s, or its ended word: acked); an eager root
// Broadcast's failure found then (rootSettle) fails this call before it
// writes.
func (o *operation) boardPublish(s int, data []byte) error {
	b := &o.c.board
	if prev := b.written[s]; prev > 0 {
		off, aborted := b.ackOff(s), b.aborted.Load()
		for m, mem := range b.peers {
			if m == o.c.rank {
				continue
			}
			if a := ackedBy(mem, off, prev); !aborted && a != 0 { // acked: no wait to set
				// Retired, or claimed again (its id, loaded after the ack: a
				// claim stores it before the new owner's acks, which are not
				// m's acks of this communicator): m may have closed it.
				if a == ^uint64(0) || word(mem, 0).Load() != o.c.id {
					if err := b.closedErr(o.c, m, mem, o.key.Op); err != nil {
						return err
					}
				}
				continue
			}
			o.bw = boardWait{kind: waitAck, peer: m, mem: mem, off: off, want: prev}
			if err := o.boardAwait(); err != nil {
				return err
			}
		}
	}
	if err := b.rootSettle(o.c, s); err != nil { // every member is done with it: settle it now
		return err
	}
	slot := b.slot(b.peers[o.c.rank], s)
	if s < boardSlots { // a ring slot holds no AllReduce
		word(slot, boardOffDone).Store(0) // no reader looks at it before this call's seq+1 (allReduceBoardSplit)
	}
	o.hdr.marshal(slot[boardOffHeader : boardOffHeader+headerLen])
	switch o.hdr.kind {
	case KindBroadcast:
		copyChanged(slot[boardSlotHead:], data)
	case KindAllToAll: // its own block nobody reads
		b, r := len(data)/o.c.Size(), o.c.rank
		cp := o.c.board.stream.copier()
		cp(slot[boardSlotHead:], data[:r*b])
		cp(slot[boardSlotHead+(r+1)*b:], data[(r+1)*b:])
	default:
		copy(slot[boardSlotHead:], data)
	}
	word(slot, 0).Store(o.key.Op + 1)
	b.written[s] = o.key.Op + 1
	o.boardWrote = true
	b.ringBell(o.c.rank, o.key.Op+1)
	return nil
}

// copyChanged copies src into dst (at least as long), leaving alone each
// block of changedBlock bytes (from the start) that dst holds already: a
// root Broadcast's data into its slot (boardPublish). The receivers of the
// slot's last call read it into their caches; a block written again, even
// with the same bytes, takes its lines out of them, so each receiver
// fetches it anew from the root's cache, where a block left alone stays
// in theirs. A loop that broadcasts the same data (as the peers'
// benchmarks do) so costs the root a comparison instead of a copy and the
// receivers a copy from their own caches: with 4 ranks on 2 cores, 64 KiB
// took 12.1 us a call (median of 21 rounds, load 16-20) against 18.4
// (bench/results/shm_large.md, session 21). New data costs a comparison
// of each block's first bytes, up to the first that differs, before its
// copy.
func copyChanged(dst, src []byte) {
	for i := 0; i < len(src); i += changedBlock {
		j := min(i+changedBlock, len(src))
		if string(dst[i:j]) != string(src[i:j]) {
			copy(dst[i:j], src[i:j])
		}
	}
}

// changedBlock is copyChanged's block: a page. Blocks of 1 KiB read 13.0
// us in the same sitting as 12.1 above.
const changedBlock = 4096

// boardRead waits for member m's slot s of this call and checks its
// header against this rank's; it returns the slot's data.
func (o *operation) boardRead(m, s int) ([]byte, error) {
	b := &o.c.board
	slot := b.slot(b.peers[m], s)
	if m == o.c.rank && o.boardWrote {
		return slot[boardSlotHead:], nil
	}
	if !o.boardHas(m, s) {
		o.waitSlot(m, s, o.key.Op, o.key.Op+1)
		if err := o.boardAwait(); err != nil {
			return nil, err
		}
	}
	mine := b.slot(b.peers[o.c.rank], s)
	h := slot[boardOffHeader : boardOffHeader+headerLen]
	if o.boardWrote && bytes.Equal(h, mine[boardOffHeader:boardOffHeader+headerLen]) {
		return slot[boardSlotHead:], nil
	}
	theirs, err := parseBoardHeader(h)
	if err != nil {
		return nil, fmt.Errorf("from rank %d's board: %w", m, err)
	}
	if err := mismatch(o.hdr, o.c.rank, theirs, m); err != nil {
		return nil, err
	}
	return slot[boardSlotHead:], nil
}

// boardHas reports whether member m's slot s holds this call already
// (settle's checks, in its order): boardRead then sets no wait.
func (o *operation) boardHas(m, s int) bool {
	b := &o.c.board
	return !b.aborted.Load() && word(b.peers[m], 0).Load() == o.c.id && word(b.slot(b.peers[m], s), 0).Load() == o.key.Op+1
}

// parseBoardHeader decodes the operation header in a board slot (bytes
// another process wrote): a header of no data of its own.
func parseBoardHeader(b []byte) (header, error) {
	h, inline, err := parseHeader(b)
	if err != nil {
		return header{}, err
	}
	if h.carries || len(inline) > 0 {
		return header{}, fmt.Errorf("a board slot's header says it carries data")
	}
	return h, nil
}
