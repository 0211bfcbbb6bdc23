package collective

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// What a board call waits for.
const (
	waitTurn = iota // its ticket's turn (boardState.serving)
	waitAck         // a member's ack word
	waitSlot        // a member's slot of this call
)

// boardWait is a board call's wait (operation.bw, its own: a call
// waiting for its turn must not touch the running call's): on word off of
// member peer's board mem, at least want (waitTurn, waitAck) or exactly
// want (waitSlot); it also ends when peer fails the call (fail, its fail
// word), when peer wrote the call in the other slot it could have taken
// (alt, if not nil: its arguments differ, board.go) or the communicator
// is aborted.
type boardWait struct {
	kind int
	peer int
	mem  []byte
	alt  []byte
	off  int
	want uint64
	fail uint64 // seq+1 of the call
}

// waitSlot sets the call's wait (bw) to member peer's slot g of call
// seq (want seq+1), or its failure of call fail-1.
func (o *operation) waitSlot(peer, g int, seq, fail uint64) {
	b, w := &o.c.board, &o.bw
	*w = boardWait{kind: waitSlot, peer: peer, mem: b.slot(b.peers[peer], g), want: seq + 1, fail: fail}
	if a := b.otherSlot(seq, g); a >= 0 {
		w.alt = b.slot(b.peers[peer], a)
	}
}

// wrote reports whether member m wrote call seq on its board, in either
// slot the call could take.
func (b *boardState) wrote(m int, seq uint64) bool {
	mem := b.peers[m]
	if word(b.slot(mem, b.slotOf(seq, false)), 0).Load() == seq+1 {
		return true
	}
	return b.ring > 0 && word(b.slot(mem, b.slotOf(seq, true)), 0).Load() == seq+1
}

// ready reports whether the running wait has ended, one way or another
// (settle tells which); the transport's Spin polls it.
func (o *operation) boardReady() bool {
	b, w := &o.c.board, &o.bw
	if b.aborted.Load() {
		return true
	}
	switch w.kind {
	case waitTurn:
		return b.serving.Load() >= w.want
	case waitAck:
		return acked(w.mem, w.off, w.want) || word(w.mem, 0).Load() != o.c.id // its board claimed again: settle
	}
	peer := b.peers[w.peer]
	if x := word(peer, boardOffClosed).Load(); x != 0 && x < w.want { // closed before this call: settle
		return true
	}
	return word(w.mem, w.off).Load() >= w.want || failedCall(peer, w.fail) ||
		(w.alt != nil && word(w.alt, 0).Load() == w.want)
}

// settle returns the error of a wait that ended (ready): nil if it got
// what it waited for.
func (o *operation) settle() error {
	b := &o.c.board
	w := &o.bw
	if b.aborted.Load() {
		return o.c.Aborted()
	}
	if w.kind == waitAck {
		return b.closedErr(o.c, w.peer, w.mem, o.key.Op) // acked, unless the member closed
	}
	if w.kind != waitSlot {
		return nil
	}
	v := word(w.mem, w.off).Load()
	if id := word(b.peers[w.peer], 0).Load(); id != o.c.id {
		return fmt.Errorf("rank %d's board is no longer this communicator's (it holds communicator %#x's): rank %d closed this communicator", w.peer, id, w.peer)
	}
	if v == w.want {
		return nil
	}
	if failedCall(b.peers[w.peer], w.fail) {
		return o.boardPeerFailed(w.peer, w.fail)
	}
	if w.alt != nil && word(w.alt, 0).Load() == w.want {
		return otherSlotErr(o.hdr, o.c.rank, w.alt, w.peer)
	}
	if err := b.closedErr(o.c, w.peer, b.peers[w.peer], w.want-1); err != nil {
		return err
	}
	return fmt.Errorf("rank %d's board holds call %d where call %d was due: a broken board", w.peer, int64(v)-1, w.want-1)
}

// otherSlotErr is the mismatch of a call (header mine, on rank) with
// member peer, which wrote it in slot alt, where its arguments put it.
func otherSlotErr(mine header, rank int, alt []byte, peer int) error {
	theirs, err := parseBoardHeader(alt[boardOffHeader : boardOffHeader+headerLen])
	if err != nil {
		return fmt.Errorf("from rank %d's board: %w", peer, err)
	}
	if err := mismatch(mine, rank, theirs, peer); err != nil {
		return err
	}
	return fmt.Errorf("rank %d wrote a call of the same arguments in the other slot of its board: a broken board", peer)
}

// boardAwait waits for what o.bw names, polling it as the transport's
// waits do (Spin, for the transport's board spin budget), then sleeping
// on the bell of the member it waits on (boardNap) between looks (20 us
// growing to 1 ms, the longest a look waits for a bell that was not
// rung). A wait that lasts looks, at the ticks of await's, at the
// deadline, the stall, headers a peer sent that took the point-to-point
// path for this call (its arguments differ), peers that died, and the
// call's end by an abort (boardTick). Before it waits it rings this
// rank's own bell (ringBell): a peer asleep on this rank's board is never
// left asleep while this rank waits too.
func (o *operation) boardAwait() error {
	b := &o.c.board
	if o.boardReady() {
		return o.settle()
	}
	if b.phase == boardReady {
		b.ringBell(o.c.rank, ^uint64(0))
	}
	if o.boardReadyFn == nil {
		o.boardReadyFn = o.boardReady // kept by release: one allocation per operation made
	}
	o.boardSpin()
	if o.boardReady() {
		return o.settle()
	}
	lw := o.longWait()
	defer o.timer.Stop()
	nap := 20 * time.Microsecond
	done := o.ctx.Done()
	for {
		select {
		case <-done:
			return o.peerErr(o.bw.peer, o.ctx.Err())
		case <-lw.tick:
			if err := o.boardTick(&lw); err != nil {
				return err
			}
		default:
		}
		o.boardNap(nap)
		nap = min(2*nap, time.Millisecond)
		if o.boardReady() {
			return o.settle()
		}
	}
}

// boardSpin spins on the board host until the wait is over or the
// host's budget is spent: its long budget (SpinLong) for a Broadcast or
// an AllToAll on a big slot, whose waits end with a copy of up to a slot
// of data by the rank waited for, else its own.
func (o *operation) boardSpin() {
	if o.boardLongSpin() {
		o.c.board.host.SpinLong(o.ctx, o.boardReadyFn)
		return
	}
	o.c.board.host.Spin(o.ctx, o.boardReadyFn)
}

// boardLongSpin reports whether this call's board waits take the host's
// long spin (boardSpin).
func (o *operation) boardLongSpin() bool {
	return (o.hdr.kind == KindBroadcast || o.hdr.kind == KindAllToAll) && o.boardSlot < boardSlots
}

// boardNap sleeps at most d on the bell of the member o.bw waits on, or
// until that member rings it (ringBell): it marks the bell wanted, then
// looks once more, so a write that came before the mark is seen by the
// look, and one after it rings the bell (its bell then differs from the
// value read first, and the sleep ends at once). A wait for an ack (a
// root that ran a slot ring ahead of a receiver) wants the bell only once
// the member has ended half the slots' calls more than the ack needs, at
// most up to this call: it takes them without this rank, which then
// writes as many at once instead of being woken to write one at a time.
// A wait for this rank's own turn naps d.
func (o *operation) boardNap(d time.Duration) {
	b, w := &o.c.board, &o.bw
	if w.kind == waitTurn || b.phase != boardReady {
		time.Sleep(d)
		return
	}
	at := uint64(1) // any call's end
	if w.kind == waitAck {
		ahead := uint64(boardSlots / 2)
		if o.boardSlot >= boardSlots {
			ahead = uint64(max(b.ring/2, 1))
		}
		at = max(min(w.want+ahead-1, o.key.Op), w.want)
	}
	m := b.peers[w.peer]
	bell := word(m, boardOffBell)
	v := uint32(bell.Load())
	wantBell(word(m, boardOffWant), at)
	if o.boardReady() {
		return
	}
	futexWait(bell, v, d)
}

// wantBell lowers the want word w to at, if it is 0 or above.
func wantBell(w *atomic.Uint64, at uint64) {
	for {
		if x := w.Load(); x != 0 && x <= at || w.CompareAndSwap(x, at) {
			return
		}
	}
}

// ringBell wakes the peers asleep on the bell of member rank's board
// (boardNap), if one wants it once this rank has ended the calls below
// x (^0: whatever they want): one load where none does. A rank rings
// its own bell once it wrote what its peers may wait for (a call's slot,
// acks and ended word: x its calls ended; a failure, its board retired)
// and before it waits itself (^0).
func (b *boardState) ringBell(rank int, x uint64) {
	m := b.peers[rank]
	if w := word(m, boardOffWant); w.Load()-1 < x && w.Swap(0) != 0 { // 0 - 1 is ^0: none
		bell := word(m, boardOffBell)
		bell.Add(1)
		futexWake(bell)
	}
}

// boardTick is a long board wait's tick: the deadline, the flight record
// and the stall report, every peer's header (touched, never announced:
// a board call sends nothing), the peers' liveness and the call's end.
func (o *operation) boardTick(lw *longWait) error {
	b, peer := &o.c.board, o.bw.peer
	now := time.Now()
	if !o.deadline.IsZero() && !now.Before(o.deadline) {
		return o.peerErr(peer, context.DeadlineExceeded)
	}
	if now.Sub(lw.start) >= lookAfter {
		o.boardLook(lw.start)
		o.checkStall(now)
	}
	for p := range o.peers {
		if p != o.c.rank {
			o.touch(p)
		}
	}
	if err := o.boardScan(); err != nil {
		return err
	}
	for m, r := range o.c.ranks {
		if err := b.host.Down(r); err != nil && m != o.c.rank {
			return o.peerErr(m, &transport.PeerError{Rank: r, Err: err})
		}
	}
	if err := b.host.Ended(o.key); err != nil {
		return o.peerErr(peer, err)
	}
	lw.interval = min(2*lw.interval, 100*time.Millisecond)
	lw.tick = o.armTimer(lw.interval)
	return nil
}

// boardLook writes the wait to the flight record: whom it waits on, and
// as missing the members that have not written this call's slot.
func (o *operation) boardLook(since time.Time) {
	b := &o.c.board
	var peers, missing []int
	for m := range o.peers {
		if m == o.c.rank {
			continue
		}
		peers = append(peers, m)
		if o.bw.kind != waitTurn && (o.bw.kind == waitSlot || m == o.bw.peer) && !b.wrote(m, o.key.Op) {
			missing = append(missing, m)
		}
	}
	waited, peer := time.Since(since), o.bw.peer
	o.c.flight.update(o.flightID, func(r *OpRecord) {
		r.WaitingOn, r.Waited, r.Peers, r.Missing = peer, waited, peers, missing
	})
}

// boardScan checks the headers that peers on the point-to-point path sent
// for this call (touched by boardTick): any is a mismatch, as is an abort.
func (o *operation) boardScan() error {
	for peer := range o.peers {
		p := &o.peers[peer]
		if !p.touched || p.checked || !transport.Completed(p.hdrReq) {
			continue
		}
		n, err := p.hdrReq.Wait(o.ctx)
		if err != nil {
			return o.peerErr(peer, err)
		}
		theirs, _, err := parseHeader(p.hdrIn[:n])
		if err != nil {
			return fmt.Errorf("from rank %d: %w", peer, err)
		}
		if err := mismatch(o.hdr, o.c.rank, theirs, peer); err != nil {
			return err
		}
		p.checked = true
	}
	return nil
}

// boardEnter starts a board call: it waits for its turn among this rank's
// board calls, sets the board up in the communicator's first one, and
// reports whether this call runs on the board; else (the set-up call, or
// some member had no board) it runs the point-to-point algorithm.
func (o *operation) boardEnter() (bool, error) {
	b := &o.c.board
	if b.serving.Load() < o.boardTicket-1 || b.aborted.Load() { // else its turn has come: no wait to set
		o.bw = boardWait{kind: waitTurn, peer: o.c.rank, want: o.boardTicket - 1}
		if err := o.boardAwait(); err != nil {
			return false, err
		}
	}
	switch b.phase {
	case boardUntried:
		o.hdr.setUp = true // a member that has the board fails at this header (boardReset)
		return false, o.boardSetUp()
	case boardNone:
		return false, nil
	}
	o.onBoard = true
	ring := o.hdr.kind == KindBroadcast && o.hdr.count*uint64(esize(o.hdr.dt)) <= boardRingData
	o.boardSlot = b.slotOf(o.key.Op, ring)
	b.calls.Add(1)
	if err := o.boardVerify(); err != nil {
		return true, err
	}
	if b.endedAt(o.key.Op) < o.key.Op { // else the ended word acks the slot
		b.ack(o.c.rank, o.boardSlot).Store(o.key.Op)
	}
	b.storeEnded(o.c.rank, o.key.Op) // every earlier board call has ended
	return true, nil
}

// boardLeave ends a board call on this rank (end): its ack of the slot,
// whatever the outcome, its ended word (an ack of every slot: a peer
// whose call took the other slot waits on that), and its ticket.
func (o *operation) boardLeave() {
	b := &o.c.board
	if s := o.boardSlot; o.onBoard {
		if b.verify[s] != o.key.Op+1 && b.endedAt(o.key.Op+1) < o.key.Op+1 {
			b.ack(o.c.rank, s).Store(o.key.Op + 1) // else when checked (boardVerify), or by the ended word
		}
		b.storeEnded(o.c.rank, o.key.Op+1) // acks the slot it did not take too
		b.ringBell(o.c.rank, o.key.Op+1)
	}
	if o.err != nil && setUpMismatch(o.err) && b.phase != boardUntried { // found after its turn came
		o.c.boardReset()
	}
	if b.endTicket(o.boardTicket) {
		o.c.retireBoard() // the last call issued before Close
	}
}

// boardFinish ends a call that ran on the board: a header a point-to-point
// peer sent meanwhile is a mismatch; the receives of the others are
// withdrawn.
func (o *operation) boardFinish() error {
	if o.err != nil {
		return o.err
	}
	if err := o.boardScan(); err != nil {
		return o.fail(err)
	}
	for peer := range o.peers {
		if p := &o.peers[peer]; p.touched && !p.checked {
			p.hdrReq.Cancel()
		}
	}
	return nil
}

// boardNeverWrote names, for an error at the deadline, the members that
// have not written this call's slot (those a receiver waits on: every
// other where the call reads every slot).
func (o *operation) boardNeverWrote() string {
	b := &o.c.board
	var missing []int
	for m := range b.peers {
		if m != o.c.rank && !b.wrote(m, o.key.Op) && (o.bw.kind == waitSlot || m == o.bw.peer) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s never wrote this call on the board)", rankList(missing))
}

// boardPeek is the check a long point-to-point wait makes, at its ticks,
// of the communicator's board, if it has one: a member that wrote this
// call's slot took the board for it, so its arguments differ (the choice
// is a function of them): a mismatch, reported here rather than at the
// deadline. A rank on the board hears of this one the same way
// (boardScan). A Send or Recv is no such call: its o.key.Op counts the
// messages of its pair and direction, not the communicator's calls, so a
// slot of the same number is another call altogether (the probe's
// contended round: a pair's Recv taken for a mismatch with another
// rank's next AllReduce, which that rank had begun).
func (o *operation) boardPeek() error {
	b := &o.c.board
	if o.onBoard || o.hdr.kind == KindSendRecv || !b.up.Load() {
		return nil
	}
	peers := b.peers
	for m, mem := range peers {
		if m == o.c.rank || mem == nil {
			continue
		}
		for _, ring := range [2]bool{false, true} { // the slots the call could take
			slot := b.slot(mem, b.slotOf(o.key.Op, ring))
			if word(slot, 0).Load() != o.key.Op+1 {
				continue
			}
			theirs, err := parseBoardHeader(slot[boardOffHeader : boardOffHeader+headerLen])
			if err != nil {
				return fmt.Errorf("rank %d's board: %w", m, err)
			}
			if err := mismatch(o.hdr, o.c.rank, theirs, m); err != nil {
				return err
			}
		}
	}
	return nil
}
