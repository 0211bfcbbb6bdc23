//go:build linux

package shm

import (
	"context"
	"runtime"
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

// defaultSpinWait: ranks that are processes and outnumber the host's
// processors spin OversubscribedSpinWait; ranks in one process, or no more
// ranks than processors, DefaultSpinWait.
func TestDefaultSpinWait(t *testing.T) {
	for _, tc := range []struct {
		local     int
		inProcess bool
		cpus      int
		want      time.Duration
	}{
		{4, false, 2, OversubscribedSpinWait},
		{3, false, 2, OversubscribedSpinWait},
		{2, false, 2, DefaultSpinWait},
		{1, false, 2, DefaultSpinWait},
		{4, false, 8, DefaultSpinWait},
		{4, true, 2, DefaultSpinWait},
		{2, false, 0, OversubscribedSpinWait}, // an unknown count is one processor
		{1, false, 0, DefaultSpinWait},
	} {
		if got := defaultSpinWait(tc.local, tc.inProcess, tc.cpus); got != tc.want {
			t.Errorf("%d ranks, in process %v, %d processors: %v, want %v", tc.local, tc.inProcess, tc.cpus, got, tc.want)
		}
	}
}

// Connect chooses SpinWait only when the Config left it to the default: a
// SpinWait the caller set (or turned off) is kept, and a world of
// goroutines (NewLocalWorld), more ranks than processors or not, keeps
// DefaultSpinWait.
func TestSpinWaitChosenOnlyByDefault(t *testing.T) {
	for _, tc := range []struct {
		spin        time.Duration
		wantDefault bool
	}{{0, true}, {300 * time.Microsecond, false}, {-1, false}} {
		cfg, err := Config{Size: 4, SpinWait: tc.spin}.withDefaults()
		if err != nil || cfg.spinDefault != tc.wantDefault {
			t.Errorf("SpinWait %v: spinDefault %v, %v; want %v", tc.spin, cfg.spinDefault, err, tc.wantDefault)
		}
	}
	forCrowdedLocalWorld(t, func(e *Endpoint, n int) {
		if e.cfg.SpinWait != DefaultSpinWait {
			t.Errorf("rank %d of %d in one process: SpinWait %v, want %v", e.rank, n, e.cfg.SpinWait, DefaultSpinWait)
		}
	})
}

// forCrowdedLocalWorld runs check on every endpoint of a world of
// goroutines with more ranks than processors (at most 9), default Config,
// then closes them.
func forCrowdedLocalWorld(t *testing.T, check func(e *Endpoint, n int)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := min(runtime.NumCPU()+1, 9)
	eps, err := NewLocalWorld(ctx, n, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		check(e, n)
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}
}

// Connect lowers BoardSpinWait to OversubscribedBoardSpinWait only when
// the Config left both it and SpinWait to their defaults (boardSpinDefault),
// and a world of goroutines keeps DefaultBoardSpinWait.
func TestBoardSpinWaitChosenOnlyByDefault(t *testing.T) {
	for _, tc := range []struct {
		spin, board time.Duration
		wantDefault bool
	}{{0, 0, true}, {0, 300 * time.Microsecond, false}, {300 * time.Microsecond, 0, false}, {-1, 0, false}, {0, -1, false}} {
		cfg, err := Config{Size: 4, SpinWait: tc.spin, BoardSpinWait: tc.board}.withDefaults()
		if err != nil || cfg.boardSpinDefault != tc.wantDefault {
			t.Errorf("SpinWait %v BoardSpinWait %v: boardSpinDefault %v, %v; want %v", tc.spin, tc.board, cfg.boardSpinDefault, err, tc.wantDefault)
		}
	}
	forCrowdedLocalWorld(t, func(e *Endpoint, n int) {
		if e.cfg.BoardSpinWait != DefaultBoardSpinWait {
			t.Errorf("rank %d of %d in one process: BoardSpinWait %v, want %v", e.rank, n, e.cfg.BoardSpinWait, DefaultBoardSpinWait)
		}
	})
	if !oversubscribed(4, false, 2) || oversubscribed(4, true, 2) || oversubscribed(2, false, 2) {
		t.Error("oversubscribed: 4 processes on 2 processors are, 4 goroutines or 2 processes are not")
	}
}

// TestLongBoardSpin: SpinLong's budget is DefaultBoardSpinWait where
// Connect shortened the board spin for an oversubscribed host, and the
// board spin itself where it did not (a world of goroutines) or where it
// was set (never shortened then).
func TestLongBoardSpin(t *testing.T) {
	for _, tc := range []struct {
		board time.Duration
		short bool
		want  time.Duration
	}{
		{OversubscribedBoardSpinWait, true, DefaultBoardSpinWait},
		{OversubscribedBoardSpinWait, false, OversubscribedBoardSpinWait},
		{300 * time.Microsecond, false, 300 * time.Microsecond},
		{0, false, 0},
	} {
		if got := longBoardSpin(tc.board, tc.short); got != tc.want {
			t.Errorf("longBoardSpin(%v, %v) = %v, want %v", tc.board, tc.short, got, tc.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := NewLocalWorld(ctx, min(runtime.NumCPU()+1, 9), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		if e.boardSpinShort {
			t.Errorf("rank %d in one process: its board spin counted as shortened", e.rank)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}
}
