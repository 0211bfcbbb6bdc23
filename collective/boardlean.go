package collective

import (
	"bytes"
	"context"
	"slices"
	"sync/atomic"
	"time"
)

// The lean board Broadcast. A blocking Broadcast of at most boardRingData
// bytes on the board, in steady state (boardSteady), with nothing else
// running on the communicator, is most calls of a loop of small
// Broadcasts; most of its cost in the generic path is the machinery every
// call pays (the operation, its flight record under the recorder's lock
// shared by Split's communicators, its stamps, track and untrack, its
// ticket). broadcastLean runs such a call without any of it, in one hold
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
// while no call is running (so no board call holds the turn, and its
// ticket is taken and ended at once). It never waits, so it needs no
// deadline; an abort or Close that comes while it runs takes effect
// once it returns, as after a call that returned just before.
//
// Its flight record is lean too: the communicator's latest lean call, in
// leanRecord (one clock read a call), which FlightRecord shows in start
// order among the others; an OnOpEnd function, which wants every call,
// turns the lean path off.

// leanRecord is a communicator's latest lean call, for the flight
// record: written by the call under Comm.mu, read by the recorder under
// its lock. ver is odd while a call writes it (a reader retries).
type leanRecord struct {
	c     *Comm
	ver   atomic.Uint64
	seq   atomic.Uint64 // seq+1 of the call, 0: none yet
	stamp atomic.Int64  // when it ran, ns since clockEpoch
	bytes atomic.Int64
	root  atomic.Int64
	algo  atomic.Uint32
}

// write records call seq of header h, at ns since clockEpoch.
func (l *leanRecord) write(seq uint64, h header, ns int64) {
	l.ver.Add(1)
	l.seq.Store(seq + 1)
	l.stamp.Store(ns)
	l.bytes.Store(int64(h.count) * int64(esize(h.dt)))
	l.root.Store(int64(h.root))
	l.algo.Store(uint32(h.algo))
	l.ver.Add(1)
}

// read returns the latest lean call's record, if there is one and a
// stable read of it within a few tries.
func (l *leanRecord) read() (OpRecord, bool) {
	for range 8 {
		v := l.ver.Load()
		if v%2 != 0 {
			continue
		}
		seq, ns := l.seq.Load(), l.stamp.Load()
		r := OpRecord{Comm: l.c.id, Rank: l.c.rank, Size: l.c.Size(), Seq: seq - 1, Kind: KindBroadcast,
			Algo: Algorithm(l.algo.Load()), Bytes: int(l.bytes.Load()), Root: int(l.root.Load()),
			State: OpDone, WaitingOn: -1}
		r.Start = clockEpoch.Add(time.Duration(ns))
		r.End = r.Start
		if l.ver.Load() == v {
			return r, seq != 0
		}
	}
	return OpRecord{}, false
}

// broadcastLean runs a Broadcast of send (the root's; recv on the others)
// into recv, header h, the lean way if it can (see above), and reports
// whether it did: if not, it changed nothing.
func (c *Comm) broadcastLean(ctx context.Context, h header, send, recv []byte, root int) bool {
	b, e := &c.board, &c.eager
	if len(recv) > boardRingData || b.ring == 0 || c.flight.onEnd.Load() != nil || ctx.Err() != nil ||
		checkType(h.dt) != nil || checkRoot(root, c.Size()) != nil || checkWhole("recv", recv, h.dt) != nil {
		return false
	}
	data, late := recv, false // late: the root's copy into recv, out of place
	if c.rank == root && !sameRegion(send, recv) {
		if checkLen("send", send, len(recv), h.dt) != nil || checkAlias("send", send, "recv", recv) != nil {
			return false
		}
		data, late = send, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abort.err != nil || c.closed || e.running != 0 || e.run < eagerAfter || e.sig != h ||
		!b.up.Load() || b.phase != boardReady || b.aborted.Load() || b.serving.Load() != b.next {
		return false
	}
	seq := c.nextOp
	s := b.slotOf(seq, true)
	var mine [headerLen]byte
	h.marshal(mine[:])
	var clean [boardAllSlots]bool
	fail, ok := b.leanReady(c, seq, s, root, &clean)
	if !ok || (c.rank != root && !bytes.Equal(b.slot(b.peers[root], s)[boardOffHeader:boardOffHeader+headerLen], mine[:])) {
		return false
	}

	// Everything is there: the generic path's writes, in its order.
	c.nextOp++
	e.issued++
	b.next++
	b.serving.Store(b.next) // its ticket, taken and ended
	b.calls.Add(1)
	b.lean.Add(1)
	if b.verifyN > 0 { // boardVerify, the checks found clean
		low, old := ^uint64(0), 0
		for g := range b.nslots() {
			if v := b.verify[g]; v != 0 && clean[g] {
				b.verified(c, g) // done, no error: leanReady looked
			} else if v != 0 && v < low {
				low, old = v, g
			}
		}
		b.verifyLow, b.verifyOld, b.verifyFail = low, old, fail
	} else {
		b.verifyLow = ^uint64(0)
	}
	if b.endedAt(seq) < seq { // boardEnter
		b.ack(c.rank, s).Store(seq)
	}
	b.storeEnded(c.rank, seq)
	_ = b.rootSettle(c, s) // nil: leanReady looked, after the acks
	slot := b.slot(b.peers[c.rank], s)
	copy(slot[boardOffHeader:], mine[:])
	if c.rank == root {
		copy(slot[boardSlotHead:], data)
	}
	word(slot, 0).Store(seq + 1)
	b.written[s] = seq + 1
	if c.rank != root {
		copy(recv, b.slot(b.peers[root], s)[boardSlotHead:boardSlotHead+len(recv)])
	} else if late {
		copy(recv, data)
	}
	b.leftEager(c, seq, s, root)
	e.returns.Add(1)
	if b.verify[s] != seq+1 && b.endedAt(seq+1) < seq+1 { // boardLeave
		b.ack(c.rank, s).Store(seq + 1)
	}
	b.storeEnded(c.rank, seq+1)
	e.run++ // noteEndLocked: h == e.sig
	c.leanNote(seq, h)
	return true
}

// leanReady looks, changing nothing, at what call seq (slot s) would wait
// for or fail at: a failed root call pending (rootFailed), a check left
// that is due now and would fail, or one left in slot s not there yet
// (boardVerify), a member that has not acked slot s's last call or
// failed it (boardPublish, rootSettle), the root's slot of this call
// (boardRead). It marks in clean the checks it found done and matched;
// it returns the fail word boardVerify would note.
func (b *boardState) leanReady(c *Comm, seq uint64, s, root int, clean *[boardAllSlots]bool) (uint64, bool) {
	if b.rootN.Load() != 0 {
		for m, mem := range b.peers {
			if f := word(mem, boardOffFail).Load(); m != c.rank && f != 0 &&
				(b.rootPending[b.slotOf(f-1, false)].Load() == f || b.rootPending[b.slotOf(f-1, true)].Load() == f) {
				return 0, false
			}
		}
	}
	var fail uint64
	if b.verifyN > 0 {
		fail = word(b.peers[b.verifyPeer[b.verifyOld]], boardOffFail).Load() // before the looks, as boardVerify
		for g := range b.nslots() {
			if b.verify[g] == 0 {
				continue
			}
			done, bad := b.checkState(c, g)
			if bad || (!done && g == s) {
				return 0, false
			}
			clean[g] = done
		}
	}
	u := b.rootPending[s].Load()
	if prev := b.written[s]; prev > 0 {
		for m, mem := range b.peers {
			if m != c.rank && (!acked(mem, b.ackOff(s), prev) || u != 0 && word(mem, boardOffFail).Load() == u) {
				return 0, false
			}
		}
	}
	if c.rank != root {
		rm := b.peers[root]
		if word(rm, 0).Load() != c.id || word(b.slot(rm, s), 0).Load() != seq+1 {
			return 0, false
		}
	}
	return fail, true
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
	if word(mem, boardOffFail).Load() == v {
		return false, true
	}
	a := b.otherSlot(v-1, g)
	return false, a >= 0 && word(b.slot(mem, a), 0).Load() == v
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

// leanNote records lean call seq of header h (under Comm.mu), and, the
// first time, makes the communicator's record known to its flight
// recorder.
func (c *Comm) leanNote(seq uint64, h header) {
	if c.lean == nil {
		c.lean = &leanRecord{c: c}
		f := c.flight
		f.mu.Lock()
		f.lean = append(f.lean, c.lean)
		f.mu.Unlock()
	}
	c.lean.write(seq, h, int64(time.Since(clockEpoch)))
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
