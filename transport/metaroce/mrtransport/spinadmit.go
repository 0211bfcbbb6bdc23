package mrtransport

import "sync/atomic"

// Which waiters spin. Each round of a spin gives the processor away
// (sched_yield) while the waiter's goroutine keeps its P, so a spin costs
// the process that P for a scheduling round of the host per poll: a few
// microseconds on a quiet host, milliseconds beside busy neighbours.
// TestStormCollectiveLoopback's 2100 asynchronous sends, each a goroutine
// that waits for its peer's header, all spun: 1516 spinning at once in a
// goroutine dump, every P held by a yielding spinner, and the engines'
// readers and timers, and the goroutines with work to do, queued behind
// them. Beside three busy loops (load 30-50) its receives took 12-53 s,
// one run failed early with a false peer timeout ("connection closed by
// peer"), and with spinning off the same binary took 5-6 s
// (bench/results/storm30.md). So at most maxSpinners waiters of an
// endpoint spin at once, and after wastedRun spins of small receives in a
// row that ended without their message, only every probeEvery-th such
// waiter spins until one pays again: waiters whose small messages are far
// off (a storm's headers, a slow peer's) sleep at once and are woken by a
// reader, while waits that a spin serves (a small message from a rank
// that runs within the budget) keep spinning as before. Bulk waits keep
// to the bulk gauge (spinwait.Gauge), which already cuts their spins
// while they are wasted; their outcomes do not move the run.
const (
	// maxSpinners is ChannelsMax: a collective's concurrent waits, one
	// per channel, all spin.
	maxSpinners = 16
	// wastedRun is how many spins in a row must end without their
	// request before most waiters stop spinning.
	wastedRun = 8
	// probeEvery: while they do, every probeEvery-th waiter still spins,
	// so that a spin that pays again brings spinning back.
	probeEvery = 16
)

// spinAdmit counts an endpoint's spinning waiters and its run of wasted
// spins. Its fields are atomic: waiters enter and leave without the
// engine's lock.
type spinAdmit struct {
	spinning atomic.Int32 // waiters spinning now
	wasted   atomic.Int32 // small receives' spins in a row that ended without their message (at most wastedRun)
	skipped  atomic.Uint32
}

// enter reports whether a waiter (for a small receive if small) may
// spin, counting it among the spinners until leave if so: not while
// maxSpinners spin, and, for a small receive after wastedRun wasted spins
// of small receives in a row, only every probeEvery-th waiter.
func (a *spinAdmit) enter(small bool) bool {
	if small && a.wasted.Load() >= wastedRun && a.skipped.Add(1)%probeEvery != 0 {
		return false
	}
	for {
		n := a.spinning.Load()
		if n >= maxSpinners {
			return false
		}
		if a.spinning.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// leave ends a spin that enter admitted (small as given to it); paid
// reports whether its request completed during it.
func (a *spinAdmit) leave(small, paid bool) {
	a.spinning.Add(-1)
	switch {
	case !small:
	case paid:
		a.wasted.Store(0)
	case a.wasted.Load() < wastedRun:
		a.wasted.Add(1)
	}
}
