package collective

// allReduceBoard is AllReduce in one round on the board (board.go): this
// rank writes send into its slot of the call, then reads every member's
// slot, checks its header against its own (so every rank sees every
// mismatch, in this call), and folds the members' data in rank order,
// (((x0 op x1) op x2) ...), into recv: every rank computes the same bits,
// whatever the timing. Its own part is read back from its slot, so send
// may be recv.
func (c *Comm) allReduceBoard(o *operation, send, recv []byte, spec reduceSpec) error {
	s := int(o.key.Op % boardSlots)
	if err := o.boardPublish(s, send); err != nil {
		return err
	}
	for m := range c.Size() {
		data, err := o.boardRead(m, s)
		if err != nil {
			return err
		}
		data = data[:len(recv)]
		switch m {
		case 0:
			copy(recv, data)
		default:
			spec.kernel(recv, recv, data)
		}
	}
	return finishAvg(spec, recv, c.Size())
}

// barrierBoard is a Barrier in one round on the board: every rank writes
// its header in its slot of the call and waits for every other's.
func (c *Comm) barrierBoard(o *operation) error {
	s := int(o.key.Op % boardSlots)
	if err := o.boardPublish(s, nil); err != nil {
		return err
	}
	for m := range c.Size() {
		if _, err := o.boardRead(m, s); err != nil {
			return err
		}
	}
	return nil
}

// allToAllBoard is AllToAll in one round on the board: this rank writes
// its whole send buffer into its slot of the call, then reads its block
// from every member's slot, checking each header against its own; its
// own block it copies from send. It reads the members whose slots hold
// the call already first, from rank+1 on, and waits only when none does,
// for the first it has not read: a member late to the call (descheduled,
// with more ranks than cores) then holds up none of the copies that are
// ready.
func (c *Comm) allToAllBoard(o *operation, send, recv []byte) error {
	n, b := c.Size(), len(send)/c.Size()
	s := int(o.key.Op % boardSlots)
	t := c.board.stream.begin(b) // how boardPublish writes the blocks
	if err := o.boardPublish(s, send); err != nil {
		return err
	}
	copy(recv[c.rank*b:(c.rank+1)*b], send[c.rank*b:(c.rank+1)*b])
	var leftInline [pairwiseInline]int
	left := leftInline[:0] // members not read yet, from rank+1 on
	for k := 1; k < n; k++ {
		left = append(left, mod(c.rank+k, n))
	}
	read := func(m int) error {
		data, err := o.boardRead(m, s)
		if err == nil {
			copy(recv[m*b:(m+1)*b], data[c.rank*b:(c.rank+1)*b])
		}
		return err
	}
	for len(left) > 0 {
		kept := left[:0]
		for _, m := range left {
			if !o.boardHas(m, s) {
				kept = append(kept, m)
			} else if err := read(m); err != nil {
				return err
			}
		}
		if len(kept) == len(left) { // none there yet: wait for the first
			if err := read(kept[0]); err != nil {
				return err
			}
			kept = kept[1:]
		}
		left = kept
	}
	c.board.stream.end(t)
	return nil
}
