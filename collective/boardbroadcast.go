package collective

import "fmt"

// broadcastBoard is Broadcast in one round on the board (board.go). Every
// rank writes its header into its slot of the call, the root its data
// too, and a receiver copies the data from the root's slot. Outside steady
// state (eagerAfter, as the point-to-point eager calls) every rank then
// checks every member's header, as AllReduce does, so a mismatch fails
// every rank in the call. In steady state the call is eager: the root
// returns once its data is on its board, running up to boardSlots calls
// ahead of a slow receiver (its next write of a slot waits for every
// member's ack of the slot's last call), and a receiver checks only the
// root's header and the next receiver's ((r+1) mod n, unless that is the
// root): every two ranks are still joined by a chain of checks, so a
// mismatch, different roots included, is seen by a receiver in the call;
// that receiver fails the call, and the root, which returned, learns it
// at its next call on the communicator or at Close (rootPending).
func (c *Comm) broadcastBoard(o *operation, buf []byte, root int) error {
	s := int(o.key.Op % boardSlots)
	eager := o.boardSteady()
	mine := []byte(nil)
	if c.rank == root {
		mine = buf
	}
	if err := o.boardPublish(s, mine); err != nil {
		return err
	}
	if c.rank != root {
		data, err := o.boardRead(root, s)
		if err != nil {
			return err
		}
		copy(buf, data[:len(buf)])
	}
	if eager {
		if c.rank == root {
			c.board.rootPending[s].Store(o.key.Op + 1)
		} else if next := (c.rank + 1) % c.Size(); next != root {
			if _, err := o.boardRead(next, s); err != nil {
				return err
			}
		}
		c.mu.Lock()
		c.eager.returns++
		c.mu.Unlock()
		return nil
	}
	for m := range c.Size() {
		if m != root {
			if _, err := o.boardRead(m, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// boardSteady reports whether a board Broadcast may return early, as the
// eager point-to-point calls do (eagerReturn: the communicator's last
// eagerAfter calls had this header and completed matched, and this call is
// blocking and the only one running); EagerReturns counts those that
// return nil.
func (o *operation) boardSteady() bool {
	c := o.c
	if !o.sync {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &c.eager
	if c.abort.err != nil || c.closed || e.running != 1 || e.deferred != nil || e.run < eagerAfter || e.sig != o.hdr {
		return false
	}
	return true
}

// rootFailed reports a Broadcast this rank returned from as its root
// (broadcastBoard) that a receiver then failed, from the receivers' fail
// words; one every member has acked is settled and forgotten. Every call
// on the communicator asks before it runs (execute): a few loads when
// nothing is pending.
func (b *boardState) rootFailed(c *Comm) error {
	for s := range b.rootPending {
		p := &b.rootPending[s]
		u := p.Load()
		if u == 0 {
			continue
		}
		acked := true
		for m, mem := range b.peers {
			if m == c.rank {
				continue
			}
			if word(mem, boardOffFail).Load() == u {
				p.CompareAndSwap(u, 0)
				return fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from as its root once its data was on its board) failed on rank %d: %s",
					u-1, m, boardFailText(mem))
			}
			acked = acked && b.ack(m, s).Load() >= u
		}
		if acked {
			p.CompareAndSwap(u, 0)
		}
	}
	return nil
}
