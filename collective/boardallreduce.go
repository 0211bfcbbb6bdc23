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
// own block it copies from send.
func (c *Comm) allToAllBoard(o *operation, send, recv []byte) error {
	s := int(o.key.Op % boardSlots)
	if err := o.boardPublish(s, send); err != nil {
		return err
	}
	b := len(send) / c.Size()
	for m := range c.Size() {
		if m == c.rank {
			copy(recv[m*b:(m+1)*b], send[m*b:(m+1)*b])
			continue
		}
		data, err := o.boardRead(m, s)
		if err != nil {
			return err
		}
		copy(recv[m*b:(m+1)*b], data[c.rank*b:(c.rank+1)*b])
	}
	return nil
}
