package shm

import (
	"testing"
	"time"
)

// Config.BoardSpinWait: its default, SpinWait's when that alone is set
// (shorter or longer: review A15 L1, GOCOLL_SPIN_WAIT=50us spun 1 ms on
// the board), its own when set, off with SpinWait off, and its bound.
func TestBoardSpinWaitConfig(t *testing.T) {
	for _, tc := range []struct {
		spin, board, want time.Duration
		err               bool
	}{
		{0, 0, DefaultBoardSpinWait, false},
		{500 * time.Microsecond, 0, 500 * time.Microsecond, false},
		{50 * time.Microsecond, 0, 50 * time.Microsecond, false},
		{50 * time.Microsecond, 2 * time.Millisecond, 2 * time.Millisecond, false},
		{5 * time.Millisecond, 0, 5 * time.Millisecond, false},
		{0, 300 * time.Microsecond, 300 * time.Microsecond, false},
		{-1, 0, 0, false},
		{0, -1, 0, false},
		{0, MaxSpinWait + 1, 0, true},
	} {
		cfg, err := Config{Size: 1, SpinWait: tc.spin, BoardSpinWait: tc.board}.withDefaults()
		if tc.err {
			if err == nil {
				t.Errorf("SpinWait %v BoardSpinWait %v: no error", tc.spin, tc.board)
			}
			continue
		}
		if err != nil || cfg.BoardSpinWait != tc.want {
			t.Errorf("SpinWait %v BoardSpinWait %v: %v, %v; want %v", tc.spin, tc.board, cfg.BoardSpinWait, err, tc.want)
		}
	}
}
