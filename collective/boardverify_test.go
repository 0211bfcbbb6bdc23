package collective

import (
	"strings"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
)

// verifyRig is rank 1 of 3 on boards in this process's memory, with
// eager Broadcast checks of rank 2's headers left (as broadcastBoard
// leaves them) for calls first..last, each in its ring slot.
type verifyRig struct {
	c      *Comm
	hdr    header
	first  uint64
	last   uint64
	checks int
}

func newVerifyRig(t *testing.T, first, last uint64) *verifyRig {
	t.Helper()
	l, ok := layoutFor(64<<10, 16)
	if !ok {
		t.Fatal("no layout")
	}
	c := &Comm{id: 7, rank: 1, ranks: []int{0, 1, 2}}
	b := &c.board
	b.boardLayout, b.verifyLow = l, ^uint64(0)
	for range 3 {
		b.peers = append(b.peers, make([]byte, 64<<10))
	}
	r := &verifyRig{c: c, first: first, last: last,
		hdr: header{kind: KindBroadcast, dt: dtype.Int64, root: 0, count: 1, algo: AlgoBoard}}
	for seq := first; seq <= last; seq++ {
		s := b.slotOf(seq, true)
		r.write(1, s, seq, r.hdr) // this rank's own header, still in its slot
		b.verify[s], b.verifyPeer[s] = seq+1, 2
		if b.verifyN == 0 {
			b.verifyLow, b.verifyOld = seq+1, s
		}
		b.verifyN++
		b.verifyLow = min(b.verifyLow, seq+1)
		r.checks++
	}
	return r
}

// write puts call seq with header h in member m's slot s.
func (r *verifyRig) write(m, s int, seq uint64, h header) {
	slot := r.c.board.slot(r.c.board.peers[m], s)
	h.marshal(slot[boardOffHeader : boardOffHeader+headerLen])
	word(slot, 0).Store(seq + 1)
}

// verify runs boardVerify for a call that takes big slot 0 (no check
// left there: it never waits).
func (r *verifyRig) verify() error {
	o := &operation{c: r.c, boardSlot: 0}
	return o.boardVerify()
}

// TestBoardVerifyQuickLook: boardVerify returns after one look at the
// oldest check left while rank 2 has written none of the calls (and
// leaves every check), takes every check rank 2's headers allow once it
// has written some, and finds at the next call on the board, through the
// quick look, a mismatch (a header in the other kind of slot: a larger
// count), or rank 2's failure of a call that is not the oldest left,
// naming that call.
func TestBoardVerifyQuickLook(t *testing.T) {
	r := newVerifyRig(t, 10, 20)
	b := &r.c.board
	for range 3 {
		if err := r.verify(); err != nil || b.verifyN != r.checks || b.verifyLow != 11 {
			t.Fatalf("nothing written: %v, %d checks left (want %d), lowest %d", err, b.verifyN, r.checks, b.verifyLow)
		}
	}
	for seq := uint64(10); seq <= 13; seq++ { // rank 2 catches up by four calls
		r.write(2, b.slotOf(seq, true), seq, r.hdr)
	}
	if err := r.verify(); err != nil || b.verifyN != r.checks-4 || b.verifyLow != 15 {
		t.Fatalf("four written: %v, %d checks left (want %d), lowest %d (want 15)", err, b.verifyN, r.checks-4, b.verifyLow)
	}
	for seq := uint64(10); seq <= 13; seq++ {
		if got := b.ack(1, b.slotOf(seq, true)).Load(); got != seq+1 {
			t.Errorf("slot of call %d acked %d after its check, want %d", seq, got, seq+1)
		}
	}
	big := r.hdr
	big.count = 100 // its arguments put call 14 in a big slot
	r.write(2, b.slotOf(14, false), 14, big)
	err := r.verify()
	if err == nil || !strings.Contains(err.Error(), "operation #14") || !strings.Contains(err.Error(), "count") {
		t.Fatalf("rank 2 wrote call 14 in the other slot, with count 100: got %v", err)
	}

	r = newVerifyRig(t, 30, 40)
	b = &r.c.board
	if err := r.verify(); err != nil {
		t.Fatal(err)
	}
	peer := b.peers[2]
	copy(peer[boardOffText:], "bad")
	peer[boardOffTextN] = 3
	word(peer, boardOffFail).Store(36) // rank 2 failed call 35, not the oldest left (30)
	err = r.verify()
	if err == nil || !strings.Contains(err.Error(), "operation #35") || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("rank 2 failed call 35: got %v", err)
	}
	if err := r.verify(); err != nil || b.verifyN != r.checks-1 { // the others stay
		t.Fatalf("after the failure's report: %v, %d checks left (want %d)", err, b.verifyN, r.checks-1)
	}
}

// TestBoardVerifyQuickLookSeesFailureAfterSample (review A15, L2): rank 1
// (the rig) checks rank 2's
// headers of its eager Broadcasts. Rank 2 writes call 10 and fails call
// 11 before writing it (as a call that fails at its start does: rootFailed
// at execute, or its own boardVerify); rank 1's next call (its whole pass)
// takes check 10 and reads rank 2's fail word, 12, before rank 1 has call
// 11's check. Rank 1 then returns from call 11 (the root's data matched)
// and leaves the check; rank 2 writes call 12 with another root (a
// mismatch), and rank 1 leaves that check too. The package doc: a receiver
// checks its next receiver's header "at its next call on the board", and
// fails it if it differed; boardVerify's comment: the peer's failure of
// a call fails the call running now. Before 59815b4 (a whole pass each
// call) rank 1's call 12 failed naming call 11, and its call 13 naming
// call 12; with the quick look every call returns nil (fail word 12 is
// what the last whole pass saw, and rank 2's slot of call 11 never gets
// call 11), until a call reuses call 11's slot.
func TestBoardVerifyQuickLookSeesFailureAfterSample(t *testing.T) {
	r := newVerifyRig(t, 10, 10)
	b := &r.c.board
	r.write(2, b.slotOf(10, true), 10, r.hdr) // rank 2 writes call 10, matching
	peer := b.peers[2]
	copy(peer[boardOffText:], "failed at its start")
	peer[boardOffTextN] = 19
	word(peer, boardOffFail).Store(12) // and fails call 11 before writing it

	// Rank 1's call 11 starts: the whole pass takes check 10.
	if err := r.verify(); err != nil || b.verifyN != 0 {
		t.Fatalf("call 11's start: %v, %d checks left", err, b.verifyN)
	}
	// Rank 1's call 11 returns eagerly: its check is left (broadcastBoard).
	leave := func(seq uint64) {
		s := b.slotOf(seq, true)
		r.write(1, s, seq, r.hdr)
		b.verify[s], b.verifyPeer[s] = seq+1, 2
		if b.verifyN == 0 {
			b.verifyLow, b.verifyOld = seq+1, s
		}
		b.verifyN++
		b.verifyLow = min(b.verifyLow, seq+1)
	}
	leave(11)
	other := r.hdr
	other.root = 2 // rank 2 calls call 12 as its root: a mismatch only the chain of checks sees
	r.write(2, b.slotOf(12, true), 12, other)
	var errs []error
	for call := uint64(12); call < 16; call++ {
		err := r.verify() // call's start
		errs = append(errs, err)
		if err == nil {
			leave(call)
		}
	}
	for i, err := range errs {
		t.Logf("rank 1's call %d: %v", 12+i, err)
	}
	if errs[0] == nil {
		t.Errorf("rank 1's call 12 returned nil although rank 2 failed call 11 (its fail word says so) and wrote call 12 with root 2; %d checks left", b.verifyN)
	}
}
