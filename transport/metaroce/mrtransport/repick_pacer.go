package mrtransport

import "time"

// repickPacer bounds how often an endpoint re-picks, with one interval
// for re-picks on evidence (a pair that another path, or the peak rate,
// outruns) and one for tries (a pair nothing outruns), and judges each
// re-pick Interval after it: a gain (the rate rose by Gain) returns its
// kind's interval to Interval; a loss (the rate fell by Gain) doubles it,
// up to MaxInterval, and asks for the re-pick to be undone (two paths'
// figures may look alike on separate links, and a move may land a path on
// a busier link); neither doubles a try's interval, and an evidence
// interval after flatRuns of them in a row (a move on evidence that
// changed nothing most likely landed on another used link: with one link
// of four unused, three in four do, so the next is made as soon).
type repickPacer struct {
	p                 RepickPolicy
	interval, explore time.Duration // after a re-pick on evidence, after a try
	last              time.Duration // when the last re-pick was made
	pending           bool          // the last re-pick is not judged yet
	pendingTry        bool          // it was a try
	rateBefore        float64       // the connection's rate before it
	flats             int           // re-picks on evidence judged flat in a row
	// byPath is set while the last re-pick waits for a judgement of its
	// own path's figures (a crowded path's move: settle), not the rate's.
	byPath bool
}

// flatRuns is how many re-picks on evidence in a row may change nothing
// before their interval doubles.
const flatRuns = 8

// repickOutcome is a judgement of the last re-pick.
type repickOutcome int

const (
	repickPending repickOutcome = iota // nothing judged now
	repickGain                         // keep it
	repickFlat                         // keep it, wait longer for the next
	repickLoss                         // undo it
)

func newRepickPacer(p RepickPolicy, now time.Duration) repickPacer {
	return repickPacer{p: p, interval: p.Interval, explore: p.Interval, last: now}
}

// judge judges the last re-pick at now, rate being the connection's rate
// now, once Interval has passed since it.
func (r *repickPacer) judge(now time.Duration, rate float64) repickOutcome {
	if !r.pending || r.byPath || now < r.last+r.p.Interval {
		return repickPending
	}
	r.pending = false
	iv := &r.interval
	if r.pendingTry {
		iv = &r.explore
	}
	switch {
	case rate >= r.p.Gain*r.rateBefore:
		*iv, r.flats = r.p.Interval, 0
		return repickGain
	case rate*r.p.Gain <= r.rateBefore:
		*iv = min(2**iv, r.p.MaxInterval)
		return repickLoss
	}
	if !r.pendingTry {
		if r.flats++; r.flats < flatRuns {
			return repickFlat
		}
		r.flats = 0
	}
	*iv = min(2**iv, r.p.MaxInterval)
	return repickFlat
}

// settle records the judgement of a re-pick judged by its path (byPath):
// kept returns the interval to Interval; undone counts as flat, and
// doubles the interval after flatRuns in a row (where moving finds nothing
// better, as on one bottleneck, the tries become rare).
func (r *repickPacer) settle(kept bool) {
	r.pending, r.byPath = false, false
	if kept {
		r.interval, r.flats = r.p.Interval, 0
		return
	}
	if r.flats++; r.flats >= flatRuns {
		r.flats = 0
		r.interval = min(2*r.interval, r.p.MaxInterval)
	}
}

// allow reports whether a re-pick (a try, if try) may be made at now: the
// last one has been judged and its kind's interval has passed.
func (r *repickPacer) allow(now time.Duration, try bool) bool {
	iv := r.interval
	if try {
		iv = r.explore
	}
	return !r.pending && now >= r.last+iv
}

// made records a re-pick (a try, if try) at now, rate being the
// connection's rate before it.
func (r *repickPacer) made(now time.Duration, rate float64, try bool) {
	r.last, r.pending, r.pendingTry, r.rateBefore = now, true, try, rate
}
