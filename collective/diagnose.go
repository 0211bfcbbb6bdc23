package collective

import (
	"fmt"
	"slices"
	"strings"
)

// Diagnosis is one report over every rank's flight record of a
// communicator: the oldest operation some rank is stuck in, and the rank
// that holds it up.
type Diagnosis struct {
	Comm     uint64
	Stuck    bool     // some rank has an operation running
	Op       OpRecord // the oldest running operation (as its first rank saw it)
	Culprit  int      // the rank that holds it up, or -1
	Reason   string   // why Culprit: "never arrived", "did not answer", "is waited on"
	Headline string   // one line naming the culprit
	Ranks    []string // one line per rank: where it is
}

// String prints the headline and a line per rank.
func (d Diagnosis) String() string {
	var b strings.Builder
	b.WriteString(d.Headline)
	b.WriteByte('\n')
	for _, l := range d.Ranks {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}

// Diagnose reads every rank's flight record of communicator comm, by its
// rank there (nil: the rank did not answer), and names the rank holding
// up the oldest operation still running: a rank that never arrived at it
// (its record ends before it), else one that did not answer, else the end
// of the chain of ranks waiting on each other. A rank's own record is
// what it saw, so the culprit is the rank the others point at, not the
// first to complain. With no collective running, it follows the
// point-to-point operations that wait instead (see
// diagnosePointToPoint).
func Diagnose(comm uint64, records [][]OpRecord) Diagnosis {
	d := Diagnosis{Comm: comm, Culprit: -1}
	n := len(records)
	// The oldest running operation of any rank.
	for _, recs := range records {
		for _, r := range recs {
			if r.Comm == comm && r.State == OpRunning && r.Kind != KindSendRecv && (!d.Stuck || r.Seq < d.Op.Seq) {
				d.Stuck, d.Op = true, r
			}
		}
	}
	if !d.Stuck && diagnosePointToPoint(&d, records) {
		return d
	}
	if !d.Stuck {
		var silent []int
		for r, recs := range records {
			if recs == nil {
				silent = append(silent, r)
				d.Ranks = append(d.Ranks, fmt.Sprintf("rank %d: did not answer", r))
				continue
			}
			d.Ranks = append(d.Ranks, rankLine(r, recs, comm, nil))
		}
		d.Headline = fmt.Sprintf("gocoll: no operation of communicator %#x is running on any of the %d ranks", comm, n)
		if len(silent) > 0 {
			d.Headline = fmt.Sprintf("gocoll: no operation of communicator %#x is running on the %d ranks that answered; %s did not answer",
				comm, n-len(silent), rankList(silent))
		}
		return d
	}
	at := make([]*OpRecord, n) // each rank's record of the stuck operation
	var never, silent []int
	for r, recs := range records {
		if recs == nil {
			silent = append(silent, r)
			d.Ranks = append(d.Ranks, fmt.Sprintf("rank %d: did not answer", r))
			continue
		}
		passed := false // a later operation is on record (this one left the ring)
		for i := range recs {
			if recs[i].Comm != comm || recs[i].Kind == KindSendRecv {
				continue
			}
			if recs[i].Seq == d.Op.Seq {
				at[r] = &recs[i]
			}
			passed = passed || recs[i].Seq > d.Op.Seq
		}
		if at[r] == nil && !passed {
			never = append(never, r)
		}
		d.Ranks = append(d.Ranks, rankLine(r, recs, comm, at[r]))
	}
	// A rank that did not answer but whose header another rank lacks
	// never arrived either.
	var stillSilent []int
	for _, r := range silent {
		if missedBy(at, r) {
			never = append(never, r)
		} else {
			stillSilent = append(stillSilent, r)
		}
	}
	silent = stillSilent
	slices.Sort(never)
	op := fmt.Sprintf("%s #%d (communicator %#x)", d.Op.Kind, d.Op.Seq, comm)
	switch {
	case len(never) > 0:
		d.Culprit, d.Reason = never[0], "never arrived"
		d.Headline = fmt.Sprintf("gocoll: hang: %s never arrived at %s, which the other ranks wait in", rankList(never), op)
	case len(silent) > 0:
		d.Culprit, d.Reason = silent[0], "did not answer"
		d.Headline = fmt.Sprintf("gocoll: hang: %s did not answer, while the others wait in %s", rankList(silent), op)
	default:
		d.Culprit = waitChainEnd(at)
		d.Reason = "is waited on"
		if d.Culprit >= 0 {
			d.Headline = fmt.Sprintf("gocoll: hang: every rank is in %s; the ranks wait, in turn, on rank %d", op, d.Culprit)
		} else {
			d.Headline = fmt.Sprintf("gocoll: no hang seen: the oldest operation running is %s, and no rank is blocked waiting in it", op)
		}
	}
	return d
}

// missedBy reports whether some rank in the operation lacks rank r's
// header.
func missedBy(at []*OpRecord, r int) bool {
	for _, op := range at {
		if op != nil && slices.Contains(op.Missing, r) {
			return true
		}
	}
	return false
}

// waitChainEnd follows WaitingOn from the first rank that waits, to a rank
// that waits on no one or whose operation ended (or around a cycle, to the
// rank where it closes), and returns it; -1 if no rank waits.
func waitChainEnd(at []*OpRecord) int {
	start := -1
	for r, op := range at {
		if op != nil && op.State == OpRunning && op.WaitingOn >= 0 {
			start = r
			break
		}
	}
	if start < 0 {
		return -1
	}
	seen := make([]bool, len(at))
	r := start
	for !seen[r] {
		seen[r] = true
		op := at[r]
		if op == nil || op.State != OpRunning || op.WaitingOn < 0 || op.WaitingOn >= len(at) {
			return r
		}
		r = op.WaitingOn
	}
	return r
}

// rankLine says where rank r is: in the stuck operation (at), or its last
// operation on the communicator.
func rankLine(r int, recs []OpRecord, comm uint64, at *OpRecord) string {
	if at != nil {
		return fmt.Sprintf("rank %d: %v", r, *at)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Comm == comm {
			return fmt.Sprintf("rank %d: not in it; last: %v", r, recs[i])
		}
	}
	return fmt.Sprintf("rank %d: no operation on this communicator yet", r)
}

// diagnosePointToPoint diagnoses, where no collective of the communicator
// runs, its point-to-point operations (whose numbers are per pair and
// direction, so not compared across ranks): from the lowest rank with one
// that waits (its oldest), it follows the ranks waited on to one that
// runs none (it never arrived at the matching Send or Recv), did not
// answer, or waits on no one (or closes a cycle). It reports whether
// some rank runs one.
func diagnosePointToPoint(d *Diagnosis, records [][]OpRecord) bool {
	at := make([]*OpRecord, len(records)) // each rank's oldest running one, one that waits if any
	found := false
	for r, recs := range records {
		for i := range recs {
			p := &recs[i]
			if p.Comm != d.Comm || p.Kind != KindSendRecv || p.State != OpRunning {
				continue
			}
			found = true
			if at[r] == nil || at[r].WaitingOn < 0 && p.WaitingOn >= 0 {
				at[r] = p
			}
		}
	}
	if !found {
		return false
	}
	d.Stuck = true
	for r, recs := range records {
		if recs == nil {
			d.Ranks = append(d.Ranks, fmt.Sprintf("rank %d: did not answer", r))
			continue
		}
		d.Ranks = append(d.Ranks, rankLine(r, recs, d.Comm, at[r]))
	}
	waiter := -1
	for r, p := range at {
		if p != nil && p.WaitingOn >= 0 {
			waiter = r
			break
		}
	}
	if waiter < 0 {
		for _, p := range at {
			if p != nil {
				d.Op = *p
				break
			}
		}
		d.Headline = fmt.Sprintf("gocoll: no hang seen: point-to-point operations of communicator %#x are running, and none is blocked waiting", d.Comm)
		return true
	}
	// Follow the ranks waited on; waiter ends as the last rank that waits.
	seen := make([]bool, len(at))
	for {
		seen[waiter] = true
		next := at[waiter].WaitingOn
		if next >= len(at) || at[next] == nil || at[next].WaitingOn < 0 || seen[next] {
			break
		}
		waiter = next
	}
	d.Op = *at[waiter]
	c := d.Op.WaitingOn
	op := fmt.Sprintf("%s #%d (communicator %#x)", d.Op.Kind, d.Op.Seq, d.Comm)
	switch {
	case c >= len(at):
		d.Reason = "is waited on"
		d.Headline = fmt.Sprintf("gocoll: hang: rank %d waits in %s on rank %d, beyond the %d ranks", waiter, op, c, len(at))
		return true
	case records[c] == nil:
		d.Culprit, d.Reason = c, "did not answer"
		d.Headline = fmt.Sprintf("gocoll: hang: rank %d did not answer, while rank %d waits on it in %s", c, waiter, op)
	case at[c] == nil:
		d.Culprit, d.Reason = c, "never arrived"
		d.Headline = fmt.Sprintf("gocoll: hang: rank %d never arrived at the point-to-point operation that rank %d waits in, %s", c, waiter, op)
	default:
		d.Culprit, d.Reason = c, "is waited on"
		d.Headline = fmt.Sprintf("gocoll: hang: ranks wait, in turn, on rank %d in point-to-point operations; rank %d waits on it in %s", c, waiter, op)
	}
	return true
}
