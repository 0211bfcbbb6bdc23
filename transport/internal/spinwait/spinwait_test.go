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
// other goroutines only every few polls.
func TestUntilFuncEveryLetsGoroutinesRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var flag atomic.Bool
	go flag.Store(true)
	polls := 0
	if !UntilFuncEvery(context.Background(), flag.Load, time.Minute, 4, func() { polls++ }) {
		t.Fatal("UntilFuncEvery gave up on a goroutine of this process")
	}
	if polls == 0 || polls > 4 {
		t.Fatalf("the goroutine ran after %d polls, want 1 to 4", polls)
	}
}
