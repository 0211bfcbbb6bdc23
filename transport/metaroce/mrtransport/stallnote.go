package mrtransport

import (
	"context"
	"log/slog"
	"time"
)

// A stall said. When this process is not scheduled (a loaded machine),
// the core comes late to its timers and credits the time it was not
// running (metaroce.EndpointStats.Late), and every collective waiting on
// this rank stalls for as long, with nothing on the wire or in the
// transport to say why: in the two-site lab at load 13-33, calls took
// 4-10 times their median while the ranks' threads waited in the run
// queue. The engine says it: after each timer run, if the time credited
// since the last timer run (one stall, or several late inputs between
// two timer runs) is at least stallNoticeMin, it is logged at info
// ("mrtransport: process not scheduled", at most one line per
// stallNoticeEvery: peak, the most credited between two timer runs, and
// late and runs, the sum and the late runs of such intervals since the
// last line), and at warn if the peak is at least stallWarnMin, at most
// once per stallWarnEvery, so that a user who sees a collective stall for
// seconds sees why.
const (
	stallNoticeMin   = 200 * time.Millisecond
	stallNoticeEvery = time.Second
	stallWarnMin     = time.Second
	stallWarnEvery   = time.Minute
)

// stallNote is what the engine has said of the core's stalls.
type stallNote struct {
	late   time.Duration // the core's Late at the last look
	runs   int64         // and its LateRuns
	peak   time.Duration // the most credited between two timer runs, not yet said
	sum    time.Duration // the stalls not yet said, of at least stallNoticeMin
	count  int64
	said   time.Duration // when the last line was logged; 0: never
	warned time.Duration // when the last warning was logged; 0: never
	// log, if not nil, receives the lines (the Endpoint's logger).
	log *slog.Logger
}

// noteStall looks at the core's credited lateness at now (after a timer
// run; the caller holds mu) and says the stalls as stallNote describes.
func (e *engine) noteStall(now time.Duration) {
	n := &e.stall
	st := e.core.Stats()
	d, runs := st.Late-n.late, st.LateRuns-n.runs
	n.late, n.runs = st.Late, st.LateRuns
	if runs > 0 && d >= stallNoticeMin {
		n.peak, n.sum, n.count = max(n.peak, d), n.sum+d, n.count+runs
	}
	if n.count == 0 || n.log == nil || (n.said != 0 && now-n.said < stallNoticeEvery) {
		return
	}
	level := slog.LevelInfo
	if n.peak >= stallWarnMin && (n.warned == 0 || now-n.warned >= stallWarnEvery) {
		level, n.warned = slog.LevelWarn, now
	}
	n.log.Log(context.Background(), level, "mrtransport: process not scheduled: its timers ran late and its peers waited (a loaded machine)",
		"peak", n.peak, "late", n.sum, "runs", n.count)
	n.peak, n.sum, n.count, n.said = 0, 0, 0, now
}
