package collective

import (
	"testing"
)

// TestLeanLeft: a lean root call leaves itself pending in its slot
// (rootPending) in place of the slot's earlier call, settled, with rootN
// counting the pending calls, as rootSettle then leftEager leave them;
// with nothing pending it adds one; a receiver leaves no pending call.
func TestLeanLeft(t *testing.T) {
	l, ok := layoutFor(64<<10, 16)
	if !ok {
		t.Fatal("no layout")
	}
	for _, tc := range []struct {
		name          string
		rank          int
		before, after uint64 // rootPending of the call's slot
		n, wantN      int64  // rootN
	}{
		{name: "root, earlier call pending", rank: 0, before: 3, after: 20, n: 2, wantN: 2},
		{name: "root, none pending", rank: 0, before: 0, after: 20, n: 1, wantN: 2},
		{name: "receiver", rank: 1, before: 0, after: 0, n: 1, wantN: 1},
	} {
		c := &Comm{id: 7, rank: tc.rank, ranks: []int{0, 1, 2}}
		b := &c.board
		b.boardLayout, b.verifyLow = l, ^uint64(0)
		for range 3 {
			b.peers = append(b.peers, make([]byte, 64<<10))
		}
		const seq = 19
		s := b.slotOf(seq, true)
		b.rootPending[s].Store(tc.before)
		b.rootN.Store(tc.n)
		b.leanLeft(c, seq, s, 0)
		if got, n := b.rootPending[s].Load(), b.rootN.Load(); got != tc.after || n != tc.wantN {
			t.Errorf("%s: rootPending %d rootN %d, want %d %d", tc.name, got, n, tc.after, tc.wantN)
		}
	}
}

// TestOverlaps: overlaps reports exactly the buffers checkAlias fails.
func TestOverlaps(t *testing.T) {
	buf := make([]byte, 64)
	for a := 0; a <= 16; a++ {
		for al := 0; al <= 16; al++ {
			for bo := 0; bo <= 16; bo++ {
				for bl := 0; bl <= 16; bl++ {
					x, y := buf[a:a+al], buf[bo:bo+bl]
					if got, want := overlaps(x, y), checkAlias("send", x, "recv", y) != nil; got != want {
						t.Fatalf("overlaps([%d:%d], [%d:%d]) = %v, checkAlias says %v", a, a+al, bo, bo+bl, got, want)
					}
				}
			}
		}
	}
}

// TestLeanVerified: a check a lean pass found done and matched, taken by
// leanVerified, leaves what verified leaves: the check gone, one check
// fewer, the slot acked with the call's seq+1.
func TestLeanVerified(t *testing.T) {
	var got [2]struct {
		verify, ack uint64
		n           int
	}
	for i := range got {
		r := newVerifyRig(t, 10, 13)
		b := &r.c.board
		s := b.slotOf(11, true)
		r.write(2, s, 11, r.hdr)
		if i == 0 {
			if done, err := b.verified(r.c, s); !done || err != nil {
				t.Fatalf("verified: %v %v", done, err)
			}
		} else {
			b.leanVerified(r.c.rank, s)
		}
		got[i].verify, got[i].ack, got[i].n = b.verify[s], b.ack(r.c.rank, s).Load(), b.verifyN
	}
	if got[0] != got[1] || got[1].ack != 12 || got[1].n != 3 {
		t.Errorf("leanVerified left %+v, verified %+v (want ack 12, 3 checks)", got[1], got[0])
	}
}

// TestLeanAckedBy: leanAckedBy acks exactly where ackedBy does, and a
// retired board (acks and ended ^0) is ^0 for both.
func TestLeanAckedBy(t *testing.T) {
	const x, off = 40, boardOffAcks
	vals := []uint64{0, x - 1, x, x + 5, ^uint64(0)}
	mem := make([]byte, boardCtrlBytes)
	for _, a := range vals {
		for _, e := range vals {
			word(mem, off).Store(a)
			word(mem, boardOffEnded).Store(e)
			got, want := leanAckedBy(mem, off, x), ackedBy(mem, off, x)
			if (got != 0) != (want != 0) || got != 0 && got < x {
				t.Errorf("ack %d ended %d: leanAckedBy %d, ackedBy %d", a, e, got, want)
			}
			if a == ^uint64(0) && e == ^uint64(0) && (got != ^uint64(0) || want != ^uint64(0)) {
				t.Errorf("retired: leanAckedBy %d, ackedBy %d", got, want)
			}
		}
	}
}

// TestLeanAckedSeenEnded: a member's ended word seen at or above a slot's
// previous call acks it from then on without being loaded again (a lower
// ended word stored meanwhile, which a live board never stores, does not
// undo it), but the member's close (closed word) or its board claimed by
// another communicator still sends the call to the generic path; one seen
// below prev is loaded again.
func TestLeanAckedSeenEnded(t *testing.T) {
	const prev, off = 40, boardOffAcks
	c := &Comm{id: 7, rank: 0, ranks: []int{0, 1}}
	b := &c.board
	mem := make([]byte, boardCtrlBytes)
	b.peers, b.seenEnded = [][]byte{make([]byte, boardCtrlBytes), mem}, make([]uint64, 2)
	word(mem, 0).Store(c.id)
	word(mem, boardOffEnded).Store(prev - 1)
	if b.leanAcked(c, 1, mem, off, prev) {
		t.Fatal("acked by an ended word below prev")
	}
	word(mem, boardOffEnded).Store(prev + 3)
	if !b.leanAcked(c, 1, mem, off, prev) || b.seenEnded[1] != prev+3 {
		t.Fatalf("not acked by ended %d, or not kept (seenEnded %d)", prev+3, b.seenEnded[1])
	}
	word(mem, boardOffEnded).Store(0) // not loaded again
	if !b.leanAcked(c, 1, mem, off, prev) {
		t.Fatal("ended seen at prev+3 no longer acks")
	}
	if b.leanAcked(c, 1, mem, off, prev+4) {
		t.Fatal("acked a later call by an ended word not loaded again")
	}
	word(mem, boardOffClosed).Store(prev)
	if b.leanAcked(c, 1, mem, off, prev) {
		t.Fatal("acked by a member that closed the communicator")
	}
	word(mem, boardOffClosed).Store(0)
	word(mem, 0).Store(c.id + 1)
	if b.leanAcked(c, 1, mem, off, prev) {
		t.Fatal("acked by a board claimed by another communicator")
	}
}
