package collective

import "fmt"

// broadcastBoard is Broadcast in one round on the board (board.go). The
// root writes its header and buf into its slot of the call and returns:
// its buffer is reusable at once, and it runs up to boardSlots calls ahead
// of a slow receiver (its next write of the same slot waits for every
// member's ack of this one). A receiver writes its header in its own slot,
// reads the root's slot, checks the root's header and the next receiver's
// ((r+1) mod n, unless that is the root) against its own, and copies the
// data: every pair of ranks is joined by a chain of such checks, so a
// mismatch among any ranks, different roots included, is seen by a
// receiver in the call. A receiver that sees one fails the call, and the
// root, which returned, learns it at its next call on the communicator
// (rootPending).
func (c *Comm) broadcastBoard(o *operation, buf []byte, root int) error {
	s := int(o.key.Op % boardSlots)
	if c.rank == root {
		if err := o.boardPublish(s, buf); err != nil {
			return err
		}
		c.board.rootPending[s].Store(o.key.Op + 1)
		return nil
	}
	if err := o.boardPublish(s, nil); err != nil {
		return err
	}
	data, err := o.boardRead(root, s)
	if err != nil {
		return err
	}
	copy(buf, data[:len(buf)])
	if next := (c.rank + 1) % c.Size(); next != root {
		if _, err := o.boardRead(next, s); err != nil {
			return err
		}
	}
	return nil
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
