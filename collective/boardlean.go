package collective

import (
	"bytes"
	"context"
	"slices"
	"time"
)

// The lean board Broadcast. A blocking Broadcast of at most boardRingData
// bytes on the board, in steady state (boardSteady), with nothing else
// running on the communicator, is most calls of a loop of small
// Broadcasts; most of its cost in the generic path is the machinery every
// call pays (the operation, its flight record under the recorder's lock
// shared by Split's communicators, its stamps, track and untrack, its
// ticket, its atomic counts). broadcastLean runs such a call without any of it, in one hold
// of Comm.mu, when it can finish without a wait and without an error:
// it first looks, changing nothing, at everything the generic path would
// wait for or fail at (the root's failure reports, the checks left by
// earlier calls, the acks of its slot, the root's slot and header), and
// only if all of it is there does it write, in the generic path's order,
// what that path would have written (its acks and ended word, its slot,
// its checks left, its pending root call) and return. Else it changes
// nothing and the call takes the generic path, which waits (with ctx, its
// deadline and stall reports), finds the mismatch or failure, and fails
// the call on every rank as before.
//
// Held Comm.mu is what keeps it apart from everything else: a call begun,
// Close, Abort and the board's set-up each take it, and it runs only
// while no call is running (so no board call holds the turn, and it
// takes no ticket: serving == next stays). It never waits, so it needs no
// deadline; an abort or Close that comes while it runs takes effect
// once it returns, as after a call that returned just before.
//
// Its stores to the words peers read (its acks, ended word and slot
// sequence) are release stores (publish), not Go's sequentially
// consistent atomic ones: each is of a word the peers wait on to rise,
// and each comes after all the call's loads (leanReady's looks and the
// root's data), so the one order they give up, that of the store before
// this rank's later loads, matters to nobody but the bell: a peer that
// does not see the word yet waits (or takes the generic path, which
// waits) until it does, and decides nothing from its absence; this
// rank's next call looks again at everything it needs. The one later
// load that decides something is ringBell's of the want word, which a
// peer marks before its last look and sleep (boardNap): a full fence
// (storeLoadFence) comes before it, else the load could pass the stores
// and both sides miss the other's write (a lost wake-up: the peer sleeps
// its whole nap; TestBoardBellStoreLoadOrder). Comm.mu's release right
// after would drain the stores anyway: the fence only drains them first. Every store that one side of a
// failure, Close or abort decides from (fail words, retired acks, the
// board's claim) stays on the generic path's atomic stores, and Comm.mu's
// release after the call drains them all.
//
// Its flight record is lean too: the communicator's latest lean call, in
// leanRecord (one clock read per leanStampEvery lean calls in a row),
// which FlightRecord shows in start order among the others; an OnOpEnd function, which wants every call,
// turns the lean path off.

// leanRecord is a communicator's latest lean call, for the flight
// record: written by the call and read by the recorder, both under
// Comm.mu (the recorder takes it inside its own lock; a lean call takes
// the recorder's only outside Comm.mu: leanRegister).
type leanRecord struct {
	c       *Comm
	seq     uint64 // seq+1 of the call, 0: none yet
	stamp   int64  // when call stamped-1 ran, ns since clockEpoch
	stamped uint64 // seq+1 of the call the stamp is of (leanStampEvery)
	starts  uint64 // the recorder's records started at the stamp (flightRecorder.started)
	hdr     header
}

// leanStampEvery is how many lean calls in a row on a communicator share
// one clock read: the first of a run of lean calls (the call before it on
// the communicator was not lean) reads the clock, and then every
// leanStampEvery-th, and any whose recorder started a record since the
// stamp (a call of another communicator sharing it: so the stamp never
// sorts before a record that started before the call, and the cut to
// the FlightRecords most recent never drops it for an older one); the
// others keep the stamp before theirs. A clock
// read was about 7 % of a lean 8-byte Broadcast loop's CPU time on this
// project's VMs (bench/results/small_ops.md, Session 16).
const leanStampEvery = 16

// read returns the latest lean call's record, if there is one.
func (l *leanRecord) read() (OpRecord, bool) {
	c := l.c
	c.mu.Lock()
	seq, ns, h := l.seq, l.stamp, l.hdr
	c.mu.Unlock()
	start := clockEpoch.Add(time.Duration(ns))
	return OpRecord{Comm: c.id, Rank: c.rank, Size: c.Size(), Seq: seq - 1, Kind: h.kind, Algo: h.algo,
		Bytes: int(h.count) * esize(h.dt), Root: int(h.root), State: OpDone, Start: start, End: start, WaitingOn: -1}, seq != 0
}

// broadcastLean runs a Broadcast of send (the root's; recv on the others)
// into recv, header h, the lean way if it can (see above), and reports
// whether it did: if not, it changed nothing.
func (c *Comm) broadcastLean(ctx context.Context, h header, send, recv []byte, root int) bool {
	b := &c.board
	// The argument checks are the generic path's (checkType, checkRoot,
	// checkWhole, checkLen, checkAlias) as plain tests, without their
	// calls: a call that fails one takes the generic path, which reports it.
	// recv is a whole number of elements where h.count (len(recv) over
	// the element size, rounded down: broadcast) of them fill it: a
	// multiplication, where checkWhole's remainder is a division.
	if len(recv) > boardRingData || b.ring == 0 || c.flight.onEnd.Load() != nil || ctx.Err() != nil ||
		!h.dt.Valid() || uint(root) >= uint(c.Size()) || h.count*uint64(h.dt.Size()) != uint64(len(recv)) {
		return false
	}
	data, late := recv, false // late: the root's copy into recv, out of place
	if c.rank == root && !sameRegion(send, recv) {
		if len(send) != len(recv) || overlaps(send, recv) {
			return false
		}
		data, late = send, true
	}
	c.mu.Lock()
	fresh := c.lean == nil
	ok := c.leanLocked(h, recv, data, root, late)
	l := c.lean
	c.mu.Unlock()
	if ok && fresh { // its first: made known to the recorder, outside Comm.mu
		c.leanRegister(l)
	}
	return ok
}

// leanRegister makes the communicator's lean record l known to its
// flight recorder, unless Close came since (leanClose).
func (c *Comm) leanRegister(l *leanRecord) {
	f := c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	c.mu.Lock()
	still := c.lean == l
	c.mu.Unlock()
	if still {
		f.lean = append(f.lean, l)
	}
}

// leanLocked is broadcastLean's part under Comm.mu.
func (c *Comm) leanLocked(h header, recv, data []byte, root int, late bool) bool {
	b, e := &c.board, &c.eager
	if c.abort.err != nil || c.closed || e.running != 0 || e.run < eagerAfter || e.sig != h ||
		!b.up.Load() || b.phase != boardReady || b.aborted.Load() || b.serving.Load() != b.next {
		return false
	}
	seq := c.nextOp
	s := b.slotOf(seq, true)
	var mine [headerLen]byte
	h.marshal(mine[:])
	var lc leanChecks
	pass, ok := b.leanReady(c, seq, s, root, &lc)
	if !ok || (c.rank != root && !bytes.Equal(b.slot(b.peers[root], s)[boardOffHeader:boardOffHeader+headerLen], mine[:])) {
		return false
	}

	// Everything is there: the generic path's writes, in its order.
	c.nextOp++
	e.issued++
	b.leanN++ // counted in BoardCalls and EagerReturns (no atomic add here)
	// No ticket: with no board call running (serving == next) its turn
	// has come, and Comm.mu keeps the next one out until it ends.
	if pass { // boardVerify, the checks found clean: those of the calls below lc.upto
		for q := b.verifyLow - 1; q+1 < lc.upto; q++ {
			if g := b.checkSlot(q); g >= 0 {
				b.leanVerified(c.rank, g) // done, no error: leanReady looked
			}
		}
		b.verifyLow, b.verifyOld, b.verifyFail = lc.low, lc.old, lc.fail
	} else if b.verifyN == 0 {
		b.verifyLow = ^uint64(0)
	}
	if b.endedAt(seq) < seq { // boardEnter
		publish(b.ack(c.rank, s), seq)
	}
	b.leanEnded(c.rank, seq)
	if c.rank != root {
		_ = b.rootSettle(c, s) // nil: leanReady looked, after the acks
	} // the root's: leanLeft
	slot := b.slot(b.peers[c.rank], s)
	copy(slot[boardOffHeader:], mine[:])
	if c.rank == root {
		copy(slot[boardSlotHead:], data)
	}
	publish(word(slot, 0), seq+1)
	b.written[s] = seq + 1
	if c.rank != root {
		copy(recv, b.slot(b.peers[root], s)[boardSlotHead:boardSlotHead+len(recv)])
	} else if late {
		copy(recv, data)
	}
	b.leanLeft(c, seq, s, root)
	if b.verify[s] != seq+1 && b.endedAt(seq+1) < seq+1 { // boardLeave
		publish(b.ack(c.rank, s), seq+1)
	}
	b.leanEnd(c.rank, seq+1)
	e.run++ // noteEndLocked: h == e.sig
	c.leanNote(seq, h)
	return true
}

// leanEnd is a lean call's last write, its ended word x (leanEnded),
// and then its bell (ringBell) after a full fence: the load of want must
// not pass the call's publishes, or a peer that marked want and then
// looked could miss the write while this rank misses the mark.
func (b *boardState) leanEnd(rank int, x uint64) {
	b.leanEnded(rank, x)
	storeLoadFence()
	b.ringBell(rank, x)
}

// leanEnded is storeEnded with a release store (publish).
func (b *boardState) leanEnded(rank int, x uint64) {
	if x = b.endedAt(x); x != b.endedWord {
		publish(word(b.peers[rank], boardOffEnded), x)
		b.endedWord = x
	}
}

// leanReady looks, changing nothing, at what call seq (slot s) would wait
// for or fail at: a failed root call pending (rootFailed), a check left
// that is due now and would fail, or one left in slot s not there yet
// (boardVerify), a member that has not acked slot s's last call, or
// acked it by retiring its board or with another communicator's board
// claimed in its place (it may have closed the communicator),
// or failed it (boardPublish, rootSettle), the root's slot of this call
// (boardRead). Unless boardVerify's quick look finds nothing due, it
// makes a pass over the checks left (pass, leanPass), noting in lc
// those it found done and matched.
func (b *boardState) leanReady(c *Comm, seq uint64, s, root int, lc *leanChecks) (pass, ok bool) {
	if b.rootN.Load() != 0 {
		for m, mem := range b.peers {
			if f := word(mem, boardOffFail).Load(); m != c.rank && f != 0 && (b.pendingRoot(f) || b.pendingRoot(word(mem, boardOffFailB4).Load())) {
				return false, false
			}
		}
	}
	pass = b.verifyN > 0
	if pass && b.verify[s] == 0 && b.verify[b.verifyOld] == b.verifyLow && !b.due(b.verifyOld) {
		pass = false // boardVerify's quick look: nothing due, no pass
	}
	if pass && !b.leanPass(c, seq, s, lc) {
		return false, false
	}
	u := b.rootPending[s].Load()
	if prev := b.written[s]; prev > 0 {
		for m, mem := range b.peers {
			if m == c.rank {
				continue
			}
			if !b.leanAcked(c, m, mem, b.ackOff(s), prev) || u != 0 && b.settleFails(c, mem, u) {
				return false, false
			}
		}
	}
	if c.rank != root {
		rm := b.peers[root]
		if word(rm, 0).Load() != c.id || word(b.slot(rm, s), 0).Load() != seq+1 {
			return false, false
		}
	}
	return pass, true
}

// pendingRoot reports whether u (seq+1, 0: none) is a root Broadcast
// pending here (rootFailed), in either slot it could take.
func (b *boardState) pendingRoot(u uint64) bool {
	return u != 0 && (b.rootPending[b.slotOf(u-1, false)].Load() == u || b.rootPending[b.slotOf(u-1, true)].Load() == u)
}

// settleFails reports whether rootSettle, member mem having acked the
// pending root call u, would fail the call settling it (failedAt).
func (b *boardState) settleFails(c *Comm, mem []byte, u uint64) bool {
	failed, sure := failedAt(mem, u)
	return failed || !sure && b.unheard(c, u)
}

// leanAckedBy is ackedBy with the ended word loaded first: where calls
// follow each other a member stores its ended word, not the slot's own
// ack (storeEnded), so the ended word is the one that acks in a steady
// loop, and ackedBy's first load, of the ack word, a cache line a peer
// wrote a ring of calls ago, was one miss a member each call spent for
// nothing (8 B Broadcast loop, 4 processes, perf record: that load 18 %
// of leanReady's samples, the ended word's 54 %). Either order reads
// what acks at some instant of the loads: a retirement stores the acks
// and then ended (^0, retireBoard), so an ended word seen below ^0 is
// one from before it, as the ack word ackedBy would have seen first.
func leanAckedBy(mem []byte, off int, x uint64) uint64 {
	if e := word(mem, boardOffEnded).Load(); e >= x {
		return e
	}
	if a := word(mem, off).Load(); a >= x {
		return a
	}
	return 0
}

// leanAcked reports whether member m (board mem) has done reading the
// slot (ack offset off) of every call below prev, as leanAckedBy says,
// and is still in the communicator: its board not retired (^0), not
// claimed again (its id, loaded after the ack), not closed (its closed
// word, stored before Close retires the acks); else the generic path
// decides (closedErr). An ended word only rises while its board is this
// communicator's, so one seen at or above prev (seenEnded) is not loaded
// again: a member stores it every call of a loop, and its load was a
// cache miss a member a call (8 B Broadcast loop, perf record: 82 % of
// leanReady's samples); the id and closed word lie in a line a member
// writes only as it closes, fails or sleeps.
func (b *boardState) leanAcked(c *Comm, m int, mem []byte, off int, prev uint64) bool {
	if m >= len(b.seenEnded) || b.seenEnded[m] < prev {
		a := leanAckedBy(mem, off, prev)
		if a == 0 || a == ^uint64(0) {
			return false
		}
		if m < len(b.seenEnded) && word(mem, boardOffEnded).Load() == a { // it acked by its ended word
			b.seenEnded[m] = a
		}
	}
	return word(mem, 0).Load() == c.id && word(mem, boardOffClosed).Load() == 0
}

// leanChecks is what a lean pass over the checks left found (leanPass):
// the checks of the calls below upto are done and matched; low is the
// lowest left after them (^0: none) and old its slot; fail the peer's
// fail word, loaded before the looks.
type leanChecks struct {
	upto, low, fail uint64
	old             int
}

// leanPass is boardVerify's whole pass for a lean call seq (slot s),
// changing nothing: it looks at the checks left in call order, from the
// oldest, up to the first that is not done. Every check left is of the
// same peer, which writes its calls in order (boardVerify): while it has
// not come to that call it has come to none of the later ones, and the
// one way it may have ended a later one without coming to this one, its
// failure, shows in its fail word, looked at here. So a receiver as far ahead of its next receiver as
// the ring is deep looks at the few checks that came since its last
// call, not at every one left, nor at every slot of the ring. It reports
// false (the call then takes the generic path, whose boardVerify decides)
// on a check found bad, one in slot s not done, the peer's failure of a
// call left to check, and checks far older than the ring (verifyLow may
// lag after a failed call).
func (b *boardState) leanPass(c *Comm, seq uint64, s int, lc *leanChecks) bool {
	q, left := b.verifyLow-1, b.verifyN
	if q > seq || seq-q > uint64(2*b.nslots()) {
		return false
	}
	lc.fail = word(b.peers[b.verifyPeer[b.verifyOld]], boardOffFail).Load() // before the looks, as boardVerify
	lc.low, lc.old = ^uint64(0), 0
	for ; left > 0 && q < seq; q++ {
		g := b.checkSlot(q)
		if g < 0 {
			continue
		}
		left--
		done, bad := b.checkState(c, g)
		if bad {
			return false
		}
		if !done {
			v := q + 1
			if b.verify[s] >= v || lc.fail > v { // in slot s, or the peer failed a later call: past this one
				return false
			}
			lc.upto, lc.low, lc.old = v, v, g
			return true
		}
	}
	lc.upto = q + 1
	return left == 0
}

// checkSlot is the slot holding the check left of call q (boardVerify),
// or -1 if none is.
func (b *boardState) checkSlot(q uint64) int {
	if g := b.slotOf(q, true); b.verify[g] == q+1 {
		return g
	}
	if g := b.slotOf(q, false); b.verify[g] == q+1 {
		return g
	}
	return -1
}

// checkState is what verified would find in slot g's check now, without
// taking it: done (the peer's header is there and equals this rank's),
// or bad (a mismatch, the peer's failure of the call, the call in the
// other slot: verified would fail it); neither: not there yet.
func (b *boardState) checkState(c *Comm, g int) (done, bad bool) {
	v, mem := b.verify[g], b.peers[b.verifyPeer[g]]
	theirs, mine := b.slot(mem, g), b.slot(b.peers[c.rank], g)
	if word(theirs, 0).Load() == v {
		ok := bytes.Equal(theirs[boardOffHeader:boardOffHeader+headerLen], mine[boardOffHeader:boardOffHeader+headerLen])
		return ok, !ok
	}
	if failedCall(mem, v) {
		return false, true
	}
	a := b.otherSlot(v-1, g)
	return false, a >= 0 && word(b.slot(mem, a), 0).Load() == v
}

// leanVerified is verified for the check left in slot g that a lean
// pass found done and matched (leanPass), with nothing changed since
// (Comm.mu, and the peer reuses slot g only after this rank's ack): it
// takes the check and acks the slot, as verified does, without looking
// again, and the ack is a release store (publish) as the lean call's
// others, not Go's atomic Store (XCHG, a full barrier).
func (b *boardState) leanVerified(rank, g int) {
	v := b.verify[g]
	b.verify[g] = 0
	b.verifyN--
	publish(b.ack(rank, g), v)
}

// leanLeft is leftEager for lean call seq (slot s), with the root's
// rootSettle of slot s's earlier call, which leanLocked leaves to it: on
// the root that call, pending u, was acked by every member and failed by
// none (leanReady looked, after the acks), so settling it and leaving
// this one pending is one compare-and-swap of u for seq+1, rootN
// unchanged, where rootSettle and leftEager take four atomic
// read-modify-writes (a compare-and-swap and an add each). If nothing
// is pending in slot s, or the swap finds u gone (rootFailed took it),
// it does what they do.
func (b *boardState) leanLeft(c *Comm, seq uint64, s, root int) {
	if c.rank == root {
		p := &b.rootPending[s]
		if u := p.Load(); u != 0 && p.CompareAndSwap(u, seq+1) {
			return
		}
		_ = b.rootSettle(c, s) // nil, as above; 0 pending: nothing to do
	}
	b.leftEager(c, seq, s, root)
}

// leftEager records what an eager board Broadcast (seq, slot s) leaves
// after it returns: the root's call, pending until settled (rootPending),
// or a receiver's check of its next receiver's header (boardVerify).
func (b *boardState) leftEager(c *Comm, seq uint64, s, root int) {
	if c.rank == root {
		if b.rootPending[s].Swap(seq+1) == 0 { // 0: settled by boardPublish
			b.rootN.Add(1)
		}
		return
	}
	if next := (c.rank + 1) % c.Size(); next != root {
		b.verify[s], b.verifyPeer[s] = seq+1, next // checked later: boardVerify
		if b.verifyN == 0 {
			b.verifyLow, b.verifyOld = seq+1, s // the oldest
		}
		b.verifyN++
		b.verifyLow = min(b.verifyLow, seq+1)
	}
}

// leanNote records lean call seq of header h, under Comm.mu.
func (c *Comm) leanNote(seq uint64, h header) {
	if c.lean == nil {
		c.lean = &leanRecord{c: c} // made known to the recorder after (leanRegister)
	}
	l := c.lean
	n := c.flight.started.Load()                                                              // a line a loop of lean calls alone does not write
	if l.stamped == 0 || l.seq != seq || seq+1-l.stamped >= leanStampEvery || n != l.starts { // a run's first, 16 since the stamp, or a record started since
		l.stamp, l.stamped, l.starts = int64(time.Since(clockEpoch)), seq+1, n
	}
	l.seq, l.hdr = seq+1, h
}

// leanClose (Close) moves the communicator's latest lean call into the
// flight record's ring, as an ordinary record, unless a later call of the
// communicator is there, and its lean record out of the recorder: a
// closed communicator's latest call stays, and the recorder keeps no
// lean record for communicators that are gone.
func (c *Comm) leanClose() {
	c.mu.Lock()
	l := c.lean
	c.lean = nil
	c.mu.Unlock()
	if l == nil {
		return
	}
	f := c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.lean, l); i >= 0 {
		f.lean = slices.Delete(f.lean, i, i+1)
	}
	r, ok := l.read()
	for id := f.next - min(f.next, FlightRecords); ok && id < f.next; id++ {
		if x := &f.ring[id%FlightRecords]; x.Comm == c.id && x.Kind != KindSendRecv && x.Seq > r.Seq {
			ok = false // a later call is there: the lean one is not the latest
		}
	}
	if ok {
		f.startLocked(r)
	}
}
