package collective

import "testing"

// A lean call reads the clock when the call before it on the
// communicator was not lean, and then once per leanStampEvery lean calls
// in a row; the record names the latest call always, and its stamp is of
// that call or of one of the leanStampEvery-1 before it.
func TestLeanStampEvery(t *testing.T) {
	c := &Comm{flight: &flightRecorder{}}
	h := header{kind: KindBroadcast}
	want := map[uint64]uint64{} // seq -> seq+1 of the stamped call after it
	stamped := uint64(0)
	seqs := []uint64{}
	for s := uint64(0); s < 40; s++ {
		seqs = append(seqs, s)
	}
	seqs = append(seqs, 45, 46, 47) // a gap: calls 40-44 were not lean
	for i, s := range seqs {
		if s%leanStampEvery == 0 && s < 40 || s == 45 {
			stamped = s + 1
		}
		want[s] = stamped
		c.leanNote(s, h)
		l := c.lean
		if l.seq != s+1 || l.stamped != want[s] {
			t.Fatalf("call %d (%d-th noted): record of call %d, stamp of call %d; want %d, %d", s, i, l.seq-1, l.stamped-1, s, want[s]-1)
		}
		if s+1-l.stamped >= leanStampEvery {
			t.Fatalf("call %d: its stamp is %d calls old", s, s+1-l.stamped)
		}
		if r, ok := l.read(); !ok || r.Seq != s || r.Start.IsZero() {
			t.Fatalf("call %d: read %+v %v", s, r, ok)
		}
	}
}

// A lean call reads the clock again when its recorder started a record
// since the stamp (another communicator's call): its stamp is then never
// before that record's start.
func TestLeanStampAfterOtherRecord(t *testing.T) {
	c := &Comm{flight: &flightRecorder{}}
	h := header{kind: KindBroadcast}
	c.leanNote(0, h) // stamped
	c.leanNote(1, h) // keeps it
	if l := c.lean; l.stamped != 1 {
		t.Fatalf("call 1: stamp of call %d, want 0", l.stamped-1)
	}
	start := opNow()
	c.flight.start(OpRecord{Start: start, State: OpDone})
	c.leanNote(2, h) // a record started since the stamp
	l := c.lean
	if l.stamped != 3 {
		t.Fatalf("call 2, after another record started: stamp of call %d, want 2", l.stamped-1)
	}
	if r, _ := l.read(); r.Start.Before(start) {
		t.Fatalf("call 2's stamp %v is before the record started before it (%v)", r.Start, start)
	}
	c.leanNote(3, h) // nothing started since: keeps it
	if l.stamped != 3 {
		t.Fatalf("call 3: stamp of call %d, want 2", l.stamped-1)
	}
}
