package mrtransport

import (
	"runtime"
	"time"
)

// Before the timer fails a connection for its peer's silence
// (metaroce.Endpoint.SilenceDue), and before it runs the core's timers
// late (metaroce.Endpoint.Late: the process was not running), the engine
// reads what its sockets already hold. On a loaded host the timer's goroutine can run before the
// readers that the runtime's poller has woken (or before the poller has
// looked at all): the peer's answers then wait in the kernel while the
// core sees only silence, and a retransmission timeout due while the
// process was not running fires on data whose ACK sits unread (a
// spurious retransmission and a window cut on a path that lost nothing). Draining first makes the decision on what was
// heard, not on what was read. It is bounded: at most drainBudget of the
// timer's time and drainPasses passes over the ready sockets (one pass
// when the timer is only late), so a peer
// that is really gone is named at most that much later while the other
// peers keep the sockets busy.
const (
	drainBudget = 20 * time.Millisecond
	drainPasses = 256
)

// drainBeforeTimers is run by the timer before the core's timers: if a
// connection is due to fail for silence, or the timer runs late beyond
// jitter, it reads the sockets without
// waiting and hands their datagrams to the core, until none is left or the
// bound is reached. While the core places payloads (a reader may have
// peeked at a datagram it is about to read into place, which another read
// would take), it yields to the readers instead of reading, and so it
// does after a pass that skipped a socket a reader was reading into place. Where the
// engine cannot read its sockets itself (simulated or interposed sockets),
// it does nothing.
func (e *engine) drainBeforeTimers() {
	sp := e.spin
	if sp == nil {
		return
	}
	e.lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	now := e.now()
	late := e.core.Late(now) > 0 // before SilenceDue, which credits it
	due := e.core.SilenceDue(now)
	e.mu.Unlock() // an input that changes nothing polled: nothing to write
	passes := drainPasses
	switch {
	case due:
		e.st.silenceDrains.Add(1)
	case late:
		// One pass: what the sockets hold now. Under a storm they are
		// never empty, and a late timer that drained for drainBudget
		// each time would run its timers that much later still.
		e.st.lateDrains.Add(1)
		passes = 1
	default:
		return
	}

	sp.mu.Lock() // wait for a spinning waiter's pass
	defer sp.mu.Unlock()
	deadline := time.Now().Add(drainBudget)
	for range passes {
		if e.placing.Load() {
			ready, err := sp.poller.Ready(sp.ready[:0])
			sp.ready = ready
			if err != nil || len(ready) == 0 {
				return
			}
			runtime.Gosched() // let the readers read into place
		} else {
			n, ready, skipped, _ := e.readReady(sp, sp.ms)
			e.st.drainedBatches.Add(int64(n))
			if !ready {
				return
			}
			if skipped > 0 {
				runtime.Gosched() // let the reader that peeked read into place
			}
		}
		if !time.Now().Before(deadline) {
			return
		}
	}
}
