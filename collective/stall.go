package collective

import (
	"fmt"
	"os"
	"strings"
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
type StallReport struct {
	At      time.Time  // when the stall was found
	Op      OpRecord   // the stalled operation
	Pending []OpRecord // this rank's running operations, the stalled one included
}

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
// pending operations, one a line.
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
	for _, p := range s.Pending {
		fmt.Fprintf(&b, "  %s\n", p.format(s.At))
	}
	return b.String()
}

// checkStall reports the operation's stall once, when it has run past
// the communicator's stall threshold by now.
func (o *operation) checkStall(now time.Time) {
	d := o.c.cfg.StallTimeout
	if o.stalled || d < 0 || now.Sub(o.start) < d {
		return
	}
	o.stalled = true
	rep := StallReport{At: now, Pending: Pending(o.c.flight.snapshot())}
	for _, r := range rep.Pending {
		if r.Comm == o.c.id && r.Seq == o.key.Op && r.Kind == o.hdr.kind {
			rep.Op = r
		}
	}
	if f := o.c.cfg.OnStall; f != nil {
		f(rep)
		return
	}
	fmt.Fprint(os.Stderr, rep.String())
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
