package ddp

import (
	"slices"
	"time"
)

// Stats sums up the synchronising steps of a Model so far: how long
// gradient communication ran and how much of it backward hid.
type Stats struct {
	Steps int // synchronising steps (Waits that reduced)
	// Comm is the wall time during which at least one of a step's
	// AllReduces was in flight, summed over the steps.
	Comm time.Duration
	// Exposed is the part of Comm after Wait was called: communication
	// the training loop waited for, not hidden behind backward.
	Exposed time.Duration
	// Wait is the time spent in Wait, including the conversion and
	// division of the gradients.
	Wait time.Duration
}

// Hidden is the share of Comm that ran before Wait was called, in [0, 1]
// (0 with no communication).
func (s Stats) Hidden() float64 {
	if s.Comm <= 0 {
		return 0
	}
	return float64(s.Comm-s.Exposed) / float64(s.Comm)
}

// Stats returns the Model's statistics so far.
func (m *Model) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// add counts one step whose operations ops ran, Wait having been called at
// waitStart and returned at waitEnd.
func (s *Stats) add(ops []*inflight, waitStart, waitEnd time.Time) {
	type span struct{ start, end time.Time }
	spans := make([]span, 0, len(ops))
	for _, op := range ops {
		spans = append(spans, span{op.start, op.end})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	var comm, exposed time.Duration
	cur := spans[0]
	flush := func(sp span) {
		comm += sp.end.Sub(sp.start)
		if from := maxTime(sp.start, waitStart); sp.end.After(from) {
			exposed += sp.end.Sub(from)
		}
	}
	for _, sp := range spans[1:] {
		if sp.start.After(cur.end) {
			flush(cur)
			cur = sp
			continue
		}
		cur.end = maxTime(cur.end, sp.end)
	}
	flush(cur)
	s.Steps++
	s.Comm += comm
	s.Exposed += exposed
	s.Wait += waitEnd.Sub(waitStart)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
