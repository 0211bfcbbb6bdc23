package spinwait

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilDone(t *testing.T) {
	done := make(chan struct{})
	polls := 0
	ok := Until(context.Background(), done, time.Minute, func() {
		polls++
		if polls == 10 {
			close(done)
		}
	})
	if !ok || polls != 10 {
		t.Fatalf("Until = %v after %d polls, want true after 10", ok, polls)
	}
}

func TestUntilBudget(t *testing.T) {
	polls := 0
	start := time.Now()
	if Until(context.Background(), make(chan struct{}), time.Millisecond, func() { polls++ }) {
		t.Fatal("Until reported done for a channel never closed")
	}
	if polls == 0 {
		t.Fatal("Until never polled")
	}
	if el := time.Since(start); el < time.Millisecond {
		t.Fatalf("Until gave up after %v, before its budget of 1ms", el)
	}
}

func TestUntilNoBudgetPollsOnce(t *testing.T) {
	polls := 0
	if Until(context.Background(), make(chan struct{}), 0, func() { polls++ }) || polls != 1 {
		t.Fatalf("Until with no budget: %d polls, want 1 and false", polls)
	}
}

func TestUntilContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	polls := 0
	if Until(ctx, make(chan struct{}), time.Minute, func() { polls++ }) || polls != 0 {
		t.Fatalf("Until with an ended context: %d polls, want 0 and false", polls)
	}
}

// TestUntilFuncEveryLetsGoroutinesRun: with one P, a goroutine of this
// process that the wait depends on still runs when the waiter yields to
// other goroutines only every few polls. A Gosched may hand the P back to
// the waiter itself (the scheduler takes the global queue first every 61st
// tick, and the runtime's own goroutines may go first), so the bound is a
// few yields, not one: 16 polls at 4 per yield. A waiter that never yielded
// would let the goroutine run only at asynchronous preemption (~10 ms, many
// thousands of polls).
func TestUntilFuncEveryLetsGoroutinesRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var flag atomic.Bool
	go flag.Store(true)
	polls := 0
	if !UntilFuncEvery(context.Background(), flag.Load, time.Minute, 4, func() { polls++ }) {
		t.Fatal("UntilFuncEvery gave up on a goroutine of this process")
	}
	if polls == 0 || polls > 16 {
		t.Fatalf("the goroutine ran after %d polls, want 1 to 16 (4 yields)", polls)
	}
}

func TestGauge(t *testing.T) {
	var g Gauge
	if b, spare := g.Budget(64 * time.Microsecond); b != 64*time.Microsecond || spare != 0 {
		t.Fatalf("zero Gauge: budget %v spare %v, want the whole 64us and 0", b, spare)
	}
	for i := range GaugeShiftMax + 3 {
		if g.Learn(0, time.Millisecond) {
			t.Fatal("a spin of the whole budget whose request came later paid")
		}
		if want := min(i+1, GaugeShiftMax); g.Shift() != want {
			t.Fatalf("after %d wasted spins: shift %d, want %d", i+1, g.Shift(), want)
		}
	}
	b, spare := g.Budget(64 * time.Microsecond)
	if b != time.Microsecond || spare != 63*time.Microsecond {
		t.Fatalf("at the maximum shift: budget %v spare %v, want 1us and 63us", b, spare)
	}
	if !g.Learn(spare, 30*time.Microsecond) || g.Shift() != GaugeShiftMax-1 {
		t.Fatalf("a spin cut short that a whole one would have caught: shift %d, want %d", g.Shift(), GaugeShiftMax-1)
	}
	for range GaugeShiftMax + 2 {
		g.Paid()
	}
	if g.Shift() != 0 {
		t.Fatalf("after paid spins: shift %d, want 0", g.Shift())
	}
}
