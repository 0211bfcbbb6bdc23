package collective

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultStallTimeout is Config.StallTimeout when it is zero.
const DefaultStallTimeout = 30 * time.Second

// lookAfter is how long a wait lasts before it writes its state to the
// flight record (and checks for a stall) at each of its looks: the short
// waits of a running pipeline never do.
const lookAfter = 50 * time.Millisecond

// StallReport is what a rank knows when one of its operations has run
// past Config.StallTimeout: the operation, whom it waits on, which of its
// peers had not sent their header (not started it), and every operation
// of this rank still running. The operation goes on waiting (until
// Config.Timeout or its context's deadline).
//
// A communicator reports at most once per stall interval (its
// StallTimeout, and at least minStallInterval, 1 s), the first stall at
// once: a stall within the interval of the last report waits for the
// interval's end, and one that had already passed the threshold at the
// last report (that report counted it) is not reported again. So a storm
// of stalled operations gives a report or two, not one per operation.
type StallReport struct {
	At      time.Time  // when the stall was found
	Op      OpRecord   // the stalled operation
	Pending []OpRecord // this rank's running operations, oldest first, the stalled one included
}

// minStallInterval is the least time between two stall reports of one
// communicator, for StallTimeouts below it.
const minStallInterval = time.Second

// maxStallListed bounds the pending operations a report's text lists one
// a line; it counts the others, by the rank they wait on.
const maxStallListed = 16

// maxStallGroups bounds the ranks a report's count of unlisted operations
// names.
const maxStallGroups = 3

// Culprit is the rank the stalled operation is held up by: the first
// peer that never sent its header (it has not called the operation), or
// else the one it waits on; -1 if unknown.
func (s StallReport) Culprit() int {
	if len(s.Op.Missing) > 0 {
		return s.Op.Missing[0]
	}
	return s.Op.WaitingOn
}

// String prints the report: a headline naming the culprit, then the
// pending operations, one a line, the oldest maxStallListed (16) of them,
// and a line counting the others by the rank they wait on, so that the
// text stays short at any number of pending operations.
func (s StallReport) String() string {
	var b strings.Builder
	op := s.Op
	fmt.Fprintf(&b, "gocoll: stall: rank %d of %d has run %s #%d for %v", op.Rank, op.Size, op.Kind, op.Seq,
		s.At.Sub(op.Start).Round(time.Millisecond))
	switch {
	case len(op.Missing) > 0:
		fmt.Fprintf(&b, "; %s never arrived (no header of this operation from them)", rankList(op.Missing))
		if op.WaitingOn >= 0 {
			fmt.Fprintf(&b, "; waiting on rank %d", op.WaitingOn)
		}
	case op.WaitingOn >= 0:
		fmt.Fprintf(&b, "; waiting on rank %d, which started it, for %v", op.WaitingOn, op.Waited.Round(time.Millisecond))
	}
	b.WriteString("; still waiting\n")
	listed := s.Pending[:min(len(s.Pending), maxStallListed)]
	for _, p := range listed {
		fmt.Fprintf(&b, "  %s\n", p.format(s.At))
	}
	if more := s.Pending[len(listed):]; len(more) > 0 {
		fmt.Fprintf(&b, "  and %d more running operations: %s\n", len(more), waitCounts(more))
	}
	return b.String()
}

// waitCounts counts records by the rank they wait on, the largest counts
// first: "250 waiting on rank 0, 3 on no single rank".
func waitCounts(recs []OpRecord) string {
	counts := map[int]int{}
	for _, r := range recs {
		counts[max(r.WaitingOn, -1)]++
	}
	type group struct{ rank, n int }
	groups := make([]group, 0, len(counts))
	for r, n := range counts {
		if r >= 0 {
			groups = append(groups, group{r, n})
		}
	}
	slices.SortFunc(groups, func(a, b group) int { return cmp.Or(b.n-a.n, a.rank-b.rank) })
	var parts []string
	others := 0
	for i, g := range groups {
		if i < maxStallGroups {
			parts = append(parts, fmt.Sprintf("%d waiting on rank %d", g.n, g.rank))
		} else {
			others += g.n
		}
	}
	if others > 0 {
		parts = append(parts, fmt.Sprintf("%d waiting on %d other ranks", others, len(groups)-maxStallGroups))
	}
	if n := counts[-1]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d on no single rank", n))
	}
	return strings.Join(parts, ", ")
}

// stallState is a communicator's memory of its last stall report.
type stallState struct {
	mu   sync.Mutex
	last time.Time // the last report's At; zero: none yet
}

// checkStall reports the operation's stall, when it has run past the
// communicator's stall threshold by now, unless the communicator's last
// report counted it or came less than the stall interval ago (then a
// later look tries again); see StallReport.
func (o *operation) checkStall(now time.Time) {
	d := o.c.cfg.StallTimeout
	if o.stalled || d < 0 || now.Sub(o.start) < d {
		return
	}
	rep, ok := o.stallReport(now, d)
	if !ok {
		return
	}
	if f := o.c.cfg.OnStall; f != nil {
		f(rep)
		return
	}
	fmt.Fprint(os.Stderr, rep.String())
}

// stallReport makes the operation's stall report, if the communicator's
// stall interval lets it (see checkStall).
func (o *operation) stallReport(now time.Time, d time.Duration) (StallReport, bool) {
	st := &o.c.stalls
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.last.IsZero() {
		if !o.start.After(st.last.Add(-d)) { // stalled already at the last report, which counts it
			o.stalled = true
			return StallReport{}, false
		}
		if now.Sub(st.last) < max(d, minStallInterval) {
			return StallReport{}, false
		}
	}
	o.stalled = true
	op, pending, ok := o.c.flight.stalled(o.flightID)
	if !ok || op.State != OpRunning { // not so while it runs (flight.go keeps it)
		return StallReport{}, false
	}
	st.last = now
	return StallReport{At: now, Op: op, Pending: pending}, true
}

// maxVerdictBytes bounds a hang verdict's text.
const maxVerdictBytes = 512

// SetHangVerdict records the whole job's diagnosis of operation seq of
// communicator comm (one of those sharing this communicator's flight
// recorder), as a launcher found it: an error of that operation at its
// deadline then ends with it, so that a rank that waited on another
// waiting rank names the rank the job points at too. The latest few are
// kept; text is cut to 512 bytes.
func (c *Comm) SetHangVerdict(comm, seq uint64, text string) {
	if len(text) > maxVerdictBytes {
		text = text[:maxVerdictBytes] + "..."
	}
	f := c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.verdicts {
		if v := &f.verdicts[i]; v.comm == comm && v.seq == seq && v.text != "" {
			v.text = text
			return
		}
	}
	f.verdicts[f.nextV%maxVerdicts] = verdict{comm: comm, seq: seq, text: text}
	f.nextV++
}

// verdict is the note an error of the operation at its deadline ends
// with: the job's diagnosis, if one was recorded (see SetHangVerdict).
func (o *operation) verdict() string {
	f := o.c.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.verdicts {
		if v.text != "" && v.comm == o.c.id && v.seq == o.key.Op {
			return " (the job's hang report: " + v.text + ")"
		}
	}
	return ""
}
