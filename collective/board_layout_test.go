package collective

import (
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// TestBoardRingConfig: Config.BoardRing takes powers of two up to
// BoardRingMax, 0 (the default) and negatives (no ring); the ring then
// fits a board as the layout says, or is left out where it would not.
func TestBoardRingConfig(t *testing.T) {
	for _, ring := range []int{3, 12, BoardRingMax + 1, 2 * BoardRingMax} {
		if _, err := (Config{BoardRing: ring}).withDefaults(transport.Traits{}); err == nil {
			t.Errorf("BoardRing %d accepted", ring)
		}
	}
	for _, ring := range []int{-1, 0, 1, 8, BoardRingMax} {
		cfg, err := (Config{BoardRing: ring}).withDefaults(transport.Traits{})
		if err != nil {
			t.Errorf("BoardRing %d: %v", ring, err)
		}
		if ring == 0 && cfg.BoardRing != DefaultBoardRing {
			t.Errorf("BoardRing 0 became %d, want %d", cfg.BoardRing, DefaultBoardRing)
		}
	}
	l, ok := layoutFor(shmDefaultBoardBytes, DefaultBoardRing)
	if !ok || l.ring != DefaultBoardRing || l.slotBytes-boardSlotHead < DefaultBoardBroadcastBytes || l.bigOff%64 != 0 || l.bigOff < l.ringAckOff+8*l.ring {
		t.Errorf("shm's default board: %+v, %v: want the ring and big slots that hold DefaultBoardBroadcastBytes", l, ok)
	}
	if l, ok := layoutFor(4096, BoardRingMax); !ok || l.ring != 0 || l.bigOff != boardCtrlBytes {
		t.Errorf("a 4 KiB board with the largest ring: %+v, %v: want no ring", l, ok)
	}
	if got := l.slotOf(67, true); got != boardSlots+67%DefaultBoardRing {
		t.Errorf("call 67 in ring slot %d", got)
	}
}

// shmDefaultBoardBytes is shm's DefaultBoardBytes (not imported here).
const shmDefaultBoardBytes = 1<<20 + 36864

// TestBoardRingTakesFromBigSlots: the figures Config.BoardRing's doc
// gives for shm's default board: with the default ring (256) the big
// slots still hold 256 KiB of data; without a ring or with a smaller one,
// more (review A14 L1).
func TestBoardRingTakesFromBigSlots(t *testing.T) {
	for ring, want := range map[int]int{-1: 271168, 64: 268992, 128: 266816, DefaultBoardRing: 262464} {
		l, ok := layoutFor(shmDefaultBoardBytes, max(ring, 0))
		if got := l.slotBytes - boardSlotHead; !ok || got != want {
			t.Errorf("ring %d: big slots hold %d bytes (%v), the doc says %d", ring, got, ok, want)
		}
	}
}
