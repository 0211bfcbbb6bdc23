package collective

import (
	"strings"
	"testing"
)

// TestRootSettleFailBefore: an eager root's pending Broadcast (call 10,
// acked by rank 1) is settled from rank 1's fail and fail-before words
// (failedAt): an error naming call 10 where either holds it (the CI flake:
// rank 1's failure of call 10 followed by its failure of call 14 before
// the root settled 10); none where its failure before the last is older
// than 10 (it did not fail 10); where both are of later calls, an error
// saying so unless the root failed a call since 10 itself. The lean
// path's look (settleFails) decides as rootSettle does, and rootFailed,
// asked before a call, finds call 10 in the fail-before word too.
func TestRootSettleFailBefore(t *testing.T) {
	for _, tc := range []struct {
		name           string
		fail, b4, own  uint64 // rank 1's fail and fail-before words; the root's own fail word
		want           string // in rootSettle's error; "": nil
		failedFoundNow bool   // rootFailed reports it
	}{
		{name: "no failure"},
		{name: "failed it", fail: 11, want: "operation #10,", failedFoundNow: true},
		{name: "failed it, then call 14", fail: 15, b4: 11, want: "operation #10,", failedFoundNow: true},
		{name: "failed 4 and 14", fail: 15, b4: 5},
		{name: "failed an earlier call only", fail: 5, b4: 2},
		{name: "failed 12 and 14", fail: 15, b4: 13, want: "may have failed on rank 1"},
		{name: "failed 12 and 14, the root 13", fail: 15, b4: 13, own: 14},
		{name: "storing its failure after 14", fail: 15, b4: 15, want: "may have failed on rank 1"},
	} {
		l, ok := layoutFor(64<<10, 16)
		if !ok {
			t.Fatal("no layout")
		}
		c := &Comm{id: 7, rank: 0, ranks: []int{0, 1}}
		b := &c.board
		b.boardLayout = l
		b.peers = [][]byte{make([]byte, 64<<10), make([]byte, 64<<10)}
		s := b.slotOf(10, true)
		word(b.peers[1], b.ackOff(s)).Store(11)
		word(b.peers[1], boardOffFail).Store(tc.fail)
		word(b.peers[1], boardOffFailB4).Store(tc.b4)
		word(b.peers[0], boardOffFail).Store(tc.own)
		pend := func() {
			b.rootPending[s].Store(11)
			b.rootN.Store(1)
		}
		pend()
		if err := b.rootFailed(c); (err != nil) != tc.failedFoundNow || err != nil && !strings.Contains(err.Error(), "operation #10,") {
			t.Errorf("%s: rootFailed: %v", tc.name, err)
		}
		pend()
		lean := b.settleFails(c, b.peers[1], 11)
		err := b.rootSettle(c, s)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: rootSettle: %v, want %q", tc.name, err, tc.want)
		}
		if lean != (err != nil) {
			t.Errorf("%s: settleFails says %v, rootSettle %v", tc.name, lean, err)
		}
		if b.rootPending[s].Load() != 0 || b.rootN.Load() != 0 {
			t.Errorf("%s: still pending after rootSettle (%d, %d)", tc.name, b.rootPending[s].Load(), b.rootN.Load())
		}
	}
}
