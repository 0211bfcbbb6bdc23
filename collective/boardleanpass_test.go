package collective

import "testing"

// TestLeanPass: a lean call's pass over the checks left looks at them in
// call order up to the first not done, and decides as boardVerify's
// whole pass would: the calls below upto found done and matched, the
// first left (low) named; the generic path (false) where a check is bad,
// where the check in the call's own slot is not done, and where rank 2
// failed a later call than the first left.
func TestLeanPass(t *testing.T) {
	hdr := func(r *verifyRig, count uint64) header { h := r.hdr; h.count = count; return h }
	for _, tc := range []struct {
		name  string
		wrote uint64 // rank 2 wrote calls 10 to wrote-1 (matched)
		bad   bool   // and call wrote with a larger count
		fail  uint64 // rank 2's fail word
		seq   uint64 // the lean call
		ok    bool
		upto  uint64
		low   uint64
	}{
		{name: "none written", wrote: 10, seq: 21, ok: true, upto: 11, low: 11},
		{name: "four written", wrote: 14, seq: 21, ok: true, upto: 15, low: 15},
		{name: "all written", wrote: 21, seq: 21, ok: true, upto: 22, low: ^uint64(0)},
		{name: "a mismatch after four", wrote: 14, bad: true, seq: 21},
		{name: "a later call failed", wrote: 14, fail: 17, seq: 21},
		{name: "an earlier failure", wrote: 14, fail: 3, seq: 21, ok: true, upto: 15, low: 15},
		{name: "own slot's check not done", wrote: 10, seq: 26},
		{name: "own slot's check done", wrote: 14, seq: 26, ok: true, upto: 15, low: 15},
	} {
		r := newVerifyRig(t, 10, 20)
		b := &r.c.board
		for seq := uint64(10); seq < tc.wrote; seq++ {
			r.write(2, b.slotOf(seq, true), seq, r.hdr)
		}
		if tc.bad {
			r.write(2, b.slotOf(tc.wrote, true), tc.wrote, hdr(r, 2))
		}
		word(b.peers[2], boardOffFail).Store(tc.fail)
		var lc leanChecks
		ok := b.leanPass(r.c, tc.seq, b.slotOf(tc.seq, true), &lc)
		if ok != tc.ok || ok && (lc.upto != tc.upto || lc.low != tc.low || lc.fail != tc.fail ||
			lc.low != ^uint64(0) && lc.old != b.slotOf(lc.low-1, true)) {
			t.Errorf("%s: %v %+v, want %v upto %d low %d", tc.name, ok, lc, tc.ok, tc.upto, tc.low)
		}
		if b.verifyN != r.checks {
			t.Errorf("%s: the pass changed the checks left (%d, want %d)", tc.name, b.verifyN, r.checks)
		}
	}
}
