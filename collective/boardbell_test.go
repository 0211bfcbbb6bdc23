package collective

import "testing"

// TestBoardBell: a sleeper's want is the lowest any sleeper asked for
// (wantBell), and the board's owner rings its bell (one more, want
// cleared) only once it has ended the calls the lowest want names, or
// whatever they want (^0); a bell nobody wants is never rung (one load).
func TestBoardBell(t *testing.T) {
	b := &boardState{peers: [][]byte{make([]byte, boardCtrlBytes)}}
	want, bell := word(b.peers[0], boardOffWant), word(b.peers[0], boardOffBell)
	b.ringBell(0, ^uint64(0))
	if bell.Load() != 0 {
		t.Fatal("rung with nobody wanting it")
	}
	wantBell(want, 40)
	wantBell(want, 30)
	wantBell(want, 50)
	if want.Load() != 30 {
		t.Fatalf("want %d, want the lowest asked, 30", want.Load())
	}
	b.ringBell(0, 29)
	if bell.Load() != 0 || want.Load() != 30 {
		t.Fatalf("rung before the calls wanted ended: bell %d want %d", bell.Load(), want.Load())
	}
	b.ringBell(0, 30)
	if bell.Load() != 1 || want.Load() != 0 {
		t.Fatalf("after the calls wanted ended: bell %d want %d, want 1 and 0", bell.Load(), want.Load())
	}
	wantBell(want, 1)
	b.ringBell(0, ^uint64(0))
	if bell.Load() != 2 || want.Load() != 0 {
		t.Fatalf("rung for whatever is wanted: bell %d want %d, want 2 and 0", bell.Load(), want.Load())
	}
}
