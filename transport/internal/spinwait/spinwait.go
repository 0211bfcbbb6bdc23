// Package spinwait is the polling loop of transports that can make progress
// in the goroutine that waits (transport.Spinner): instead of sleeping until
// another goroutine or process wakes it, which costs a wake-up through the
// kernel and the Go scheduler on every message, a waiter polls for a short
// while, giving the processor away between polls.
package spinwait

import (
	"context"
	"runtime"
	"time"
)

// clockEvery is how many polls Until makes between readings of the clock:
// in a VM reading it costs as much as a poll.
const clockEvery = 4

// Until calls poll until done is closed, ctx ends or budget has passed,
// and reports whether done was closed. Between polls it yields the
// processor twice: to the other goroutines of this process on this P
// (runtime.Gosched) and to the other threads and processes on this CPU
// (sched_yield), so that spinning on a host with more busy ranks than
// cores lets the rank it waits for run. A budget of zero or less polls
// once.
func Until(ctx context.Context, done <-chan struct{}, budget time.Duration, poll func()) bool {
	return UntilFunc(ctx, func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}, budget, poll)
}

// UntilFunc is Until for a completion that done reports instead of a
// channel, for a transport that makes no channel for a request nobody
// sleeps on. The budget counts from the second poll that did not end the
// wait (after one yield), so a wait that the first yield ends reads no
// clock: under load, most waits of a small collective end there, and a
// clock read per wait was a few per cent of its CPU time.
func UntilFunc(ctx context.Context, done func() bool, budget time.Duration, poll func()) bool {
	return UntilFuncEvery(ctx, done, budget, 1, poll)
}

// monoEpoch is the origin of the waits' budgets: time.Since of it reads
// only the monotonic clock, where time.Now reads the wall clock too (on
// this project's VMs each clock read costs tens of nanoseconds).
var monoEpoch = time.Now()

// UntilFuncEvery is UntilFunc yielding to the other goroutines of this
// process (runtime.Gosched) only after every goschedEvery-th poll, and to
// the other threads and processes (sched_yield) after every poll. For a
// waiter whose peers are other processes, as shared memory's ranks under a
// launcher: there a Gosched before each sched_yield found no goroutine to
// run, yet took the runtime scheduler's locks and read the clock, about a
// tenth of an 8-byte AllReduce's CPU time, on the path of every hand-over
// of the core to the rank waited for (bench/results/small_ops.md). A
// goroutine of this process still runs within goschedEvery polls.
func UntilFuncEvery(ctx context.Context, done func() bool, budget time.Duration, goschedEvery int, poll func()) bool {
	goschedEvery = max(goschedEvery, 1)
	var deadline time.Duration    // since monoEpoch
	var cancelled <-chan struct{} // ctx.Done(), the same every call: asked once, not per poll
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i == 0 {
			cancelled = ctx.Done()
		}
		select {
		case <-cancelled:
			return false
		default:
		}
		poll()
		if done() {
			return true
		}
		if budget <= 0 {
			return false
		}
		if i == 1 {
			deadline = time.Since(monoEpoch) + budget
		} else if i > 1 && i%clockEvery == 0 && time.Since(monoEpoch) >= deadline {
			return false
		}
		yieldCPU()
		if i%goschedEvery == goschedEvery-1 {
			runtime.Gosched()
		}
	}
}
