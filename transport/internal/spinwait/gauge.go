package spinwait

import (
	"sync/atomic"
	"time"
)

// Gauge learns whether spinning pays, as an adaptive mutex does: a waiter
// spins Budget(full), the whole budget shifted right by the gauge's shift.
// A spin that ended with its request complete, or one cut short whose
// request completed within the rest of the whole budget, paid (the shift
// goes down); one whose request completed later was wasted (the shift goes
// up, to at most GaugeShiftMax). So waits that outlast any spin (a bulk
// transfer's pieces at a WAN's pace, while the ranks that would run
// meanwhile want the processor) soon spin for next to nothing, while a
// small message's round trip on an idle host keeps its whole budget. The
// shift is read and moved without a lock: a lost update only delays the
// learning by one wait. The zero Gauge spins the whole budget.
type Gauge struct{ shift atomic.Int32 }

// GaugeShiftMax bounds a Gauge: the shortest spin is the budget/64 (under
// a microsecond at a budget of 50 us), which still polls once or twice
// before the waiter sleeps.
const GaugeShiftMax = 6

// Budget returns the spin budget out of full, and what a wait cut short
// by the gauge leaves of full (0 at the whole budget).
func (g *Gauge) Budget(full time.Duration) (budget, spare time.Duration) {
	b := full >> g.shift.Load()
	return b, full - b
}

// Paid records a spin that paid.
func (g *Gauge) Paid() {
	if s := g.shift.Load(); s > 0 {
		g.shift.Store(s - 1)
	}
}

// Wasted records a spin that did not.
func (g *Gauge) Wasted() {
	if s := g.shift.Load(); s < GaugeShiftMax {
		g.shift.Store(s + 1)
	}
}

// Learn records the outcome of a spin that gave up, spare (Budget's) short
// of the whole budget, once its request completed after waited more: it
// paid if a spin of the whole budget would have caught it. It reports
// whether it paid.
func (g *Gauge) Learn(spare, waited time.Duration) bool {
	if waited <= spare {
		g.Paid()
		return true
	}
	g.Wasted()
	return false
}

// Shift returns the gauge's shift (0 to GaugeShiftMax).
func (g *Gauge) Shift() int { return int(g.shift.Load()) }
