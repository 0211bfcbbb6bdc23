package collective

import (
	"testing"
	"time"
)

// TestStreamPickSchedule: blocks up to boardStreamBlock are always
// copied plainly; above it each period tries streamTrial calls streamed,
// then streamTrial plainly, then keeps the way whose timed calls had the
// shorter median. The durations are set by hand: nothing here is timed.
func TestStreamPickSchedule(t *testing.T) {
	var p streamPick
	for range 3 {
		p.begin(boardStreamBlock)
		if p.now {
			t.Fatal("a small block was streamed")
		}
	}
	for period := range 2 {
		for i := range 2 * streamTrial {
			p.begin(boardStreamBlock + 1)
			if want := i < streamTrial; p.now != want {
				t.Fatalf("period %d call %d: streamed %v, want %v", period, i, p.now, want)
			}
			if timed := i%streamTrial != 0; p.timed != timed {
				t.Fatalf("period %d call %d: timed %v, want %v", period, i, p.timed, timed)
			}
		}
		fast, slow := time.Microsecond, time.Millisecond
		streamWins := period == 0
		for i := range streamTrial - 1 {
			p.spans[1][i], p.spans[0][i] = slow, fast
			if streamWins {
				p.spans[1][i], p.spans[0][i] = fast, slow
			}
		}
		p.n = [2]int{streamTrial - 1, streamTrial - 1}
		for i := 2 * streamTrial; i < streamPeriod; i++ {
			p.begin(boardStreamBlock + 1)
			if p.now != streamWins || p.timed {
				t.Fatalf("period %d call %d: streamed %v timed %v, want %v untimed", period, i, p.now, p.timed, streamWins)
			}
		}
	}
}
