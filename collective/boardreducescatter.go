package collective

// boardOffDone is the word of a board slot (between its header and its
// data) where a board AllReduce that folds in shards (allReduceBoardSplit)
// says, seq+1, that shard r of rank r's slot holds the reduced shard of
// the call; boardPublish zeroes it before it writes the slot.
const boardOffDone = 48

// allReduceBoardSplit is AllReduce on the board in two rounds, where every
// rank folding every member's whole buffer (allReduceBoard) costs more
// than a second hand-over (tune.BoardSplit): this rank r writes send into
// its slot of the call; it folds shard r (an n-th of the elements) of
// every member's slot in rank order, (((x0 op x1) op x2) ...), into
// recv's shard r, and writes that over shard r of its own slot (which only
// it reads) and marks the slot done; then it copies every other member's
// reduced shard out of that member's slot. Every shard is folded once, by
// its rank, in rank order: every rank gets the same bits. Each header is
// checked in the first round as allReduceBoard checks it; send may be
// recv (send is read only from the slot).
func (c *Comm) allReduceBoardSplit(o *operation, send, recv []byte, spec reduceSpec) error {
	n, r, es := c.Size(), c.rank, spec.dt.Size()
	s := int(o.key.Op % boardSlots)
	if err := o.boardPublish(s, send); err != nil {
		return err
	}
	count := len(recv) / es
	lo, hi := es*(r*count/n), es*((r+1)*count/n)
	mine := recv[lo:hi]
	var first []byte
	for m := range n {
		data, err := o.boardRead(m, s)
		if err != nil {
			return err
		}
		switch m {
		case 0:
			first = data[lo:hi]
		case 1:
			spec.kernel(mine, first, data[lo:hi]) // the first fold reads both slots: no copy into recv first
		default:
			spec.kernel(mine, mine, data[lo:hi])
		}
	}
	if err := finishAvg(spec, mine, n); err != nil {
		return err
	}
	b := &c.board
	own := b.slot(b.peers[r], s)
	copy(own[boardSlotHead+lo:], mine)
	word(own, boardOffDone).Store(o.key.Op + 1)
	for i := 1; i < n; i++ {
		m := (r + i) % n // each rank starts at its next: not all on one slot at once
		slot := b.slot(b.peers[m], s)
		o.bw = boardWait{kind: waitSlot, peer: m, mem: slot, off: boardOffDone, want: o.key.Op + 1, fail: o.key.Op + 1}
		if err := o.boardAwait(); err != nil {
			return err
		}
		mlo, mhi := es*(m*count/n), es*((m+1)*count/n)
		copy(recv[mlo:mhi], slot[boardSlotHead+mlo:boardSlotHead+mhi])
	}
	return nil
}
