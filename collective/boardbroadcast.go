package collective

import (
	"fmt"
	"time"
)

// broadcastBoard is Broadcast in one round on the board (board.go). Every
// rank writes its header into its slot of the call, the root its data
// too, and a receiver copies the data from the root's slot. Outside steady
// state (eagerAfter, as the point-to-point eager calls) every rank then
// checks every member's header, as AllReduce does, so a mismatch fails
// every rank in the call. In steady state the call is eager: the root
// returns once its data is on its board, running up to boardSlots calls
// ahead of a slow receiver, or Config.BoardRing for a call of at most
// boardRingData bytes, which takes a ring slot (its next write of a slot
// waits for every member's ack of the slot's last call), so a receiver
// finds many calls ready and takes them without waiting; a receiver checks only the
// root's header and the next receiver's ((r+1) mod n, unless that is the
// root): every two ranks are still joined by a chain of checks, so a
// mismatch, different roots included, is seen by a receiver in the call;
// that receiver fails the call, and the root, which returned, learns it
// at a later call on the communicator (at the latest the one that reuses
// the slot) or at Close (rootPending, rootSettle).
func (c *Comm) broadcastBoard(o *operation, buf []byte, root int) error {
	s := o.boardSlot
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
		c.board.leftEager(c, o.key.Op, s, root)
		c.eager.returns.Add(1)
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
// return nil. The communicator's state was read as the call was tracked
// (trackLocked), in the same hold of its lock: a call begun, or a Close,
// since then comes after that instant, as it could have in a call that
// looked here; an abort since then is seen here.
func (o *operation) boardSteady() bool {
	return o.steady && !o.c.board.aborted.Load()
}

// rootFailed reports a Broadcast this rank returned from as its root
// (broadcastBoard) that a receiver then failed: a receiver's fail word,
// or its fail-before word (the failure before the last: failedAt), that
// names a call still pending here, the older first. Every call on the
// communicator asks before it runs (execute), and Close: one load when
// nothing is pending, else two per member, however deep the ring. (A
// receiver that failed two later calls since has overwritten both: the
// root learns of the earlier one at the call that reuses its slot,
// rootSettle, and of the later ones here.)
func (b *boardState) rootFailed(c *Comm) error {
	if b.rootN.Load() == 0 {
		return nil
	}
	for m, mem := range b.peers {
		f := word(mem, boardOffFail).Load()
		if m == c.rank || f == 0 {
			continue
		}
		for _, u := range [2]uint64{word(mem, boardOffFailB4).Load(), f} { // each a call m failed
			for _, ring := range [2]bool{false, true} {
				if p := &b.rootPending[b.slotOf(u-1, ring)]; u != 0 && p.Load() == u && p.CompareAndSwap(u, 0) {
					b.rootN.Add(-1)
					return rootFailedErr(u, m, mem)
				}
			}
		}
	}
	return nil
}

// rootFailedErr is the error of an eager root Broadcast (seq+1 u) that
// member m, whose board is mem, failed.
func rootFailedErr(u uint64, m int, mem []byte) error {
	return fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from as its root once its data was on its board) failed on rank %d: %s",
		u-1, m, failReason(mem, u))
}

// failedAt reports whether member mem's board says it failed call seq+1
// u: its fail word or its fail-before word holds u (boardFail stores the
// old fail word in fail-before, then the new one: loaded here in the
// other order, a fail-before below the fail word seen is the failure
// just before it). sure is false where the board no longer tells: both
// are of calls after u (it failed two since, or is storing a third). A
// member's calls fail in their order, so a fail word below u, or a
// fail-before below u under a fail word above it, says it did not fail
// u (as of these loads: a caller that needs the final word loads the
// member's ack of u first, rootSettle).
func failedAt(mem []byte, u uint64) (failed, sure bool) {
	f := word(mem, boardOffFail).Load()
	if f <= u {
		return f == u, true
	}
	p := word(mem, boardOffFailB4).Load()
	return p == u, p <= u
}

// rootSettle checks slot s's pending root Broadcast (rootFailed): its
// error if a receiver failed it; forgotten once every member acked it.
// A receiver writes its failure before its ack (fail, then end), so the
// ack is loaded first: an ack that passed means the fail words seen
// after it hold that call's failure, unless the receiver failed later
// calls since (failedAt): its fail-before word keeps the one before the
// last (so a slow receiver's failure of the call, followed by its failure
// of a later one relayed from the receiver that checks it, is not lost:
// TestBoardEagerRootLearnsOverwrittenFailure). Where even that is
// overwritten (it failed two calls since) it is an error too, unless this
// rank failed a call since the pending one (its own fail word): that
// error told the caller already. boardPublish runs it, after its wait for
// the slot's acks, before a call reuses the slot: so the pending call is
// never overwritten unchecked.
func (b *boardState) rootSettle(c *Comm, s int) error {
	p := &b.rootPending[s]
	u := p.Load()
	if u == 0 {
		return nil
	}
	all := true
	for m, mem := range b.peers {
		if m == c.rank {
			continue
		}
		a := acked(mem, b.ackOff(s), u)
		if failed, sure := failedAt(mem, u); failed || a && !sure && b.unheard(c, u) { // settleFails
			if p.CompareAndSwap(u, 0) {
				b.rootN.Add(-1)
			}
			if !failed {
				return fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from as its root once its data was on its board) may have failed on rank %d: it has failed two calls since, the last operation #%d (%s), and its board keeps no older failure",
					u-1, m, word(mem, boardOffFail).Load()-1, boardFailText(mem))
			}
			return rootFailedErr(u, m, mem)
		}
		all = all && a
	}
	if all && p.CompareAndSwap(u, 0) {
		b.rootN.Add(-1)
	}
	return nil
}

// unheard reports whether this rank has failed no call since its pending
// root Broadcast seq+1 u (its own fail word): an unsure settle of u
// (failedAt) is then an error (rootSettle).
func (b *boardState) unheard(c *Comm, u uint64) bool {
	return word(b.peers[c.rank], boardOffFail).Load() < u
}

// boardVerify checks the headers a receiver's eager Broadcasts left to
// check (broadcastBoard): the next receiver's header of each, once it is
// on that rank's board, against this rank's own, still in its slot. A
// board call runs it as it starts: a check of the slot it is about to
// reuse waits for that header (every rank writes its header at its call's
// start, so the wait is short); the others are taken if there. The slot's
// ack waits for its check, so no rank rewrites a slot whose header is
// still to be checked. A mismatch, or the peer's failure of that call,
// fails the call running now, naming the earlier call. Once every check
// is taken it sets verifyLow to the lowest left (a failed call leaves
// the old value: never above a check still left, which is all
// storeEnded needs).
//
// Every check left is of the same peer, which writes its calls on its
// board in their order, one slot each, or fails them: while it has not
// come to the oldest check left, it has come to none of the later ones,
// and a failure of any of them changes its fail word. So when the call
// reuses no slot left to check and the oldest check is not due (due: a
// few loads), nothing else is either, and it returns without looking
// at the others: a receiver that runs the ring's depth ahead of its
// next receiver pays one look a call, not one per call ahead.
func (o *operation) boardVerify() error {
	b := &o.c.board
	if b.verifyN == 0 {
		b.verifyLow = ^uint64(0)
		return nil
	}
	cur := o.boardSlot
	if old := b.verifyOld; b.verify[cur] == 0 && b.verify[old] == b.verifyLow && !b.due(old) {
		return nil
	}
	fail := word(b.peers[b.verifyPeer[b.verifyOld]], boardOffFail).Load() // before the checks: a later change is due
	low, old := ^uint64(0), 0
	for s, left := 0, b.verifyN; left > 0 && s < b.nslots(); s++ {
		v := b.verify[s]
		if v == 0 {
			continue
		}
		left--
		done, err := b.verified(o.c, s)
		if !done && s == cur {
			o.waitSlot(b.verifyPeer[s], s, v-1, v)
			if err = o.boardAwait(); err == nil {
				done, err = b.verified(o.c, s)
			}
		}
		if err != nil {
			if b.verify[s] != 0 {
				b.verify[s] = 0
				b.verifyN--
			}
			b.ack(o.c.rank, s).Store(v)
			return fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from once it had its data) failed: %w", v-1, err)
		}
		if !done && v < low {
			low, old = v, s
		}
	}
	b.verifyLow, b.verifyOld, b.verifyFail = low, old, fail
	return nil
}

// due reports whether the check left in slot s may be taken now
// (verified would be done), or the peer failed some call left to check:
// its fail word changed since the last whole pass of boardVerify, or
// names a call whose check is left (one added after that pass sampled
// the word: two loads of this rank's own memory); or the peer's header
// of the call is there, in either slot it could take.
func (b *boardState) due(s int) bool {
	v, mem := b.verify[s], b.peers[b.verifyPeer[s]]
	if f := word(mem, boardOffFail).Load(); f != b.verifyFail || word(b.slot(mem, s), 0).Load() == v {
		return true
	} else if f >= v && (b.verify[b.slotOf(f-1, true)] == f || b.verify[b.slotOf(f-1, false)] == f) {
		return true
	}
	a := b.otherSlot(v-1, s)
	return a >= 0 && word(b.slot(mem, a), 0).Load() == v
}

// verified checks the header slot s was left to check, if it has come:
// it reports whether the check is over (and then acks the slot), and the
// mismatch or the peer's failure it found.
func (b *boardState) verified(c *Comm, s int) (bool, error) {
	v, peer := b.verify[s], b.verifyPeer[s]
	theirs, mine := b.slot(b.peers[peer], s), b.slot(b.peers[c.rank], s)
	alt := []byte(nil) // looked at only if theirs is not there: one cache line a check
	if a := b.otherSlot(v-1, s); a >= 0 {
		alt = b.slot(b.peers[peer], a)
	}
	var err error
	switch {
	case word(theirs, 0).Load() == v:
		th, mh := theirs[boardOffHeader:boardOffHeader+headerLen], mine[boardOffHeader:boardOffHeader+headerLen]
		if string(th) != string(mh) {
			ht, err1 := parseBoardHeader(th)
			hm, err2 := parseBoardHeader(mh)
			if err = firstErr(err1, err2); err == nil {
				err = mismatch(hm, c.rank, ht, peer)
			}
		}
	case failedCall(b.peers[peer], v):
		err = fmt.Errorf("rank %d failed: %s", peer, failReason(b.peers[peer], v))
	case alt != nil && word(alt, 0).Load() == v: // its arguments put the call in the other slot
		hm, err1 := parseBoardHeader(mine[boardOffHeader : boardOffHeader+headerLen])
		if err = err1; err == nil {
			err = otherSlotErr(hm, c.rank, alt, peer)
		}
	default:
		return false, nil
	}
	b.verify[s] = 0
	b.verifyN--
	b.ack(c.rank, s).Store(v)
	return true, err
}

// closeVerify runs, at Close, the checks this rank's eager Broadcasts left
// (boardVerify), waiting for a slower peer's header at most until
// boardCloseWait or Config.Timeout has passed or the peer is down; it
// returns the first mismatch or failure found, or else the first check it
// gave up on, naming the call and the rank that never wrote it (it may
// have skipped the call).
func (c *Comm) closeVerify() error {
	b := &c.board
	c.mu.Lock()
	last := b.next
	c.mu.Unlock()
	if b.host == nil || !b.up.Load() || b.serving.Load() < last {
		return nil
	}
	deadline := time.Now().Add(min(boardCloseWait, c.cfg.Timeout))
	nap := 20 * time.Microsecond
	var first error
	for s := range b.nslots() {
		for v := b.verify[s]; b.verify[s] != 0; {
			done, err := b.verified(c, s)
			if err != nil && first == nil {
				first = fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from once it had its data) failed: %w", v-1, err)
			}
			if done {
				break
			}
			peer := b.verifyPeer[s]
			late, down, gone := !time.Now().Before(deadline), b.host.Down(c.ranks[peer]), b.closedErr(c, peer, b.peers[peer], v-1)
			if late || down != nil || gone != nil {
				b.verify[s] = 0
				b.verifyN--
				if first == nil {
					why := fmt.Sprintf("not within %v", min(boardCloseWait, c.cfg.Timeout))
					if down != nil {
						why = fmt.Sprintf("and is down: %v", down)
					} else if gone != nil {
						why = fmt.Sprintf("and will not: %v", gone)
					}
					first = fmt.Errorf("an earlier call on this communicator (operation #%d, a Broadcast this rank returned from once it had its data) is unchecked: rank %d never wrote it on the board, %s", v-1, peer, why)
				}
				break
			}
			time.Sleep(nap)
			nap = min(2*nap, time.Millisecond)
		}
	}
	return first
}

// boardCloseWait bounds how long Close waits for a slower peer's header
// that an eager Broadcast of this rank left to check.
const boardCloseWait = 10 * time.Second
