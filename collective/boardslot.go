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
	copy(slot[boardSlotHead:], data)
	word(slot, 0).Store(o.key.Op + 1)
	b.written[s] = o.key.Op + 1
	o.boardWrote = true
	b.ringBell(o.c.rank, o.key.Op+1)
	return nil
}

// boardRead waits for member m's slot s of this call and checks its
// header against this rank's; it returns the slot's data.
func (o *operation) boardRead(m, s int) ([]byte, error) {
	b := &o.c.board
	slot := b.slot(b.peers[m], s)
	if m == o.c.rank && o.boardWrote {
		return slot[boardSlotHead:], nil
	}
	// There already (settle's checks, in its order): no wait to set.
	if b.aborted.Load() || word(b.peers[m], 0).Load() != o.c.id || word(slot, 0).Load() != o.key.Op+1 {
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
