package job

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RankEnd is how one rank ended.
type RankEnd struct {
	Rank    int
	Host    string
	Remote  bool               // started through rsh
	Status  syscall.WaitStatus // of the process started here (rsh's for a remote rank)
	Failed  bool               // non-zero exit or killed by a signal
	Stopped bool               // the launcher had told it to stop
	Frozen  bool               // its process was stopped (SIGSTOP) when the first rank failed
	How     string             // "exit status 1", "killed by signal 9 (killed)"
	Ended   time.Time
	Tail    []string // its last lines of output, stdout and stderr mixed
	Summary string   // its last line on stderr, else its last line
}

// Result is how a job ended.
type Result struct {
	Ranks       []RankEnd      // by rank
	First       int            // the rank that failed first, or -1
	TimedOut    bool           // Spec.Timeout passed, or Run's ctx ended
	Interrupted syscall.Signal // the first stopping signal forwarded, or 0
	Elapsed     time.Duration
	// Hang is the hang report gathered when Timeout passed, else the
	// latest gathered while the job ran (SIGUSR1, --diagnose, a stall),
	// or nil.
	Hang *Hang
	// Culprit is the rank that held the job up, or -1: see culprit.
	Culprit int
	// Superseded: another node of the job (Spec.NNodes) asked for a
	// restart or ended the job while this node's ranks ran, and they were
	// stopped.
	Superseded bool
	// NodeEnd, if not empty, is why the job of several nodes failed
	// elsewhere or as a whole, in one line ("node 1: rank 3 ... failed"):
	// ExitCode is then never 0 and Report writes it first.
	NodeEnd string
	// Links are the link figures rank 0 put in the job's store as the
	// world formed (launcher.LinksKey, GOCOLL_LINKS's form), or "": a
	// restarted round gets them (links.go).
	Links string
}

// fill records how procs ended, and which failed first (see firstFailure).
func (r *Result) fill(procs []*proc) {
	r.Ranks = make([]RankEnd, len(procs))
	for i, pr := range procs {
		r.Ranks[i] = RankEnd{Rank: pr.rank, Host: pr.host, Remote: pr.remote, Status: pr.status,
			Failed: pr.failed(), Stopped: pr.stopped, Frozen: pr.frozen, How: pr.describe(), Ended: pr.ended,
			Tail: pr.out.get(), Summary: pr.out.summary()}
	}
	r.First = firstFailure(r.Ranks)
	r.Culprit = r.culprit()
}

// culprit picks the rank that held the job up, or -1. At a timeout it
// is the hang report's culprit. Otherwise it is the rank that failed
// first, unless that rank's error names (as gocoll's errors do: "waiting
// for rank 2", "rank 2: stopped answering") a rank that did not fail on
// its own: one that was still running (stopped by SIGSTOP, hung, never
// arriving) until the launcher stopped it; the first such rank it names,
// else the culprit of the last hang report if that one did not fail on
// its own either. Then that rank, not the first to complain, is the
// culprit.
func (r *Result) culprit() int {
	if r.First < 0 {
		if !r.TimedOut {
			return -1
		}
		if r.Hang != nil && r.Hang.Err == nil && r.Hang.Diagnosis.Stuck {
			return r.Hang.Diagnosis.Culprit
		}
		for _, e := range r.Ranks { // no report (the store is a stopped rank's): a stopped rank
			if e.Frozen {
				return e.Rank
			}
		}
		return -1
	}
	first := r.Ranks[r.First]
	if first.Status.Signaled() {
		return r.First
	}
	notOnItsOwn := func(x int) bool {
		e := r.Ranks[x]
		return x != first.Rank && (!e.Failed || e.Stopped)
	}
	for _, m := range rankMention.FindAllStringSubmatch(first.Summary, -1) {
		if x, err := strconv.Atoi(m[1]); err == nil && x >= 0 && x < len(r.Ranks) && notOnItsOwn(x) {
			return x
		}
	}
	if h := r.Hang; h != nil && h.Err == nil && h.Diagnosis.Culprit >= 0 && h.Diagnosis.Culprit < len(r.Ranks) &&
		notOnItsOwn(h.Diagnosis.Culprit) {
		return h.Diagnosis.Culprit
	}
	return r.First
}

// culpritWhy says why rank c held the job up, when it is not the rank
// that failed first.
func (r *Result) culpritWhy(c int) string {
	e := r.Ranks[c]
	switch {
	case e.Frozen:
		return "stopped answering: its process was stopped (SIGSTOP or a debugger)"
	case r.Hang != nil && r.Hang.Err == nil && r.Hang.Diagnosis.Culprit == c:
		d := r.Hang.Diagnosis
		return fmt.Sprintf("%s in %s #%d (communicator %#x), in the hang report of %s",
			d.Reason, d.Op.Kind, d.Op.Seq, d.Comm, r.Hang.At.Format("15:04:05.000"))
	}
	return "it was still running, and the first error names it"
}

// signalWindow is how close after the earliest failure a failure by a
// signal still counts as first, for firstFailure.
const signalWindow = 100 * time.Millisecond

var rankMention = regexp.MustCompile(`\brank (\d+)\b`)

// firstFailure picks the rank that failed first among those that failed
// before the launcher told them to stop, or -1. The order in which the
// launcher sees exits is not quite the order of the failures: when a rank
// dies its peers' collectives fail within a millisecond, and on a busy
// host one of them may be reaped before it. So a rank whose last line of
// output on stderr (else on stdout) names another failed rank (as gocoll's errors do: "with rank 2:
// connection reset") is taken to have failed because of it, unless every
// failed rank names another. Of the rest, one killed by a signal within
// signalWindow of the earliest comes first, then the earliest.
func firstFailure(ranks []RankEnd) int {
	cands := map[int]bool{}
	for i, e := range ranks {
		if e.Failed && !e.Stopped {
			cands[i] = true
		}
	}
	if len(cands) == 0 {
		return -1
	}
	if !allBlame(ranks, cands) {
		for i := range cands {
			if blamesOther(ranks[i], cands) {
				delete(cands, i)
			}
		}
	}
	var earliest time.Time
	for i := range cands {
		if earliest.IsZero() || ranks[i].Ended.Before(earliest) {
			earliest = ranks[i].Ended
		}
	}
	best := -1
	for i := range cands {
		if ranks[i].Ended.Sub(earliest) > signalWindow {
			continue
		}
		if best < 0 || earlier(ranks[i], ranks[best]) {
			best = i
		}
	}
	return best
}

// earlier orders candidate failures: killed by a signal first, then by
// the time they ended, then by rank.
func earlier(a, b RankEnd) bool {
	if sa, sb := a.Status.Signaled(), b.Status.Signaled(); sa != sb {
		return sa
	}
	if !a.Ended.Equal(b.Ended) {
		return a.Ended.Before(b.Ended)
	}
	return a.Rank < b.Rank
}

// blamesOther reports whether e's summary line names a rank in set other
// than e's own.
func blamesOther(e RankEnd, set map[int]bool) bool {
	for _, m := range rankMention.FindAllStringSubmatch(e.Summary, -1) {
		if r, err := strconv.Atoi(m[1]); err == nil && r != e.Rank && set[r] {
			return true
		}
	}
	return false
}

func allBlame(ranks []RankEnd, set map[int]bool) bool {
	for i := range set {
		if !blamesOther(ranks[i], set) {
			return false
		}
	}
	return true
}

// ExitCode is the launcher's exit status: 0 if every rank exited 0; else
// the first failed rank's exit status, or 128+signal if a signal killed it;
// 124 for a timeout; 128+signal for a forwarded stopping signal. It is
// never 0 when a rank failed, nor when NodeEnd is set (then at least 1).
func (r *Result) ExitCode() int {
	if c := r.exitCode(); c != 0 || r.NodeEnd == "" {
		return c
	}
	return 1
}

func (r *Result) exitCode() int {
	switch {
	case r.Interrupted != 0:
		return 128 + int(r.Interrupted)
	case r.TimedOut:
		return 124
	case r.First >= 0:
		st := r.Ranks[r.First].Status
		if st.Signaled() {
			return 128 + int(st.Signal())
		}
		if c := st.ExitStatus(); c > 0 && c < 256 {
			return c
		}
		return 1
	}
	for _, e := range r.Ranks {
		if e.Failed {
			return 1
		}
	}
	return 0
}

// Report writes, for a job that did not succeed, which rank failed first,
// on which host, how, and its last lines of output; then the other ranks
// that failed, or those a timeout or signal stopped. It writes nothing for
// a job that succeeded. A job of several nodes that failed elsewhere gets
// one line first, NodeEnd.
func (r *Result) Report(w io.Writer) {
	if r.NodeEnd != "" {
		fmt.Fprintf(w, "gocoll run: %s\n", r.NodeEnd)
	}
	switch {
	case r.Interrupted != 0:
		fmt.Fprintf(w, "gocoll run: stopped by signal %d (%v) after %v\n", int(r.Interrupted), r.Interrupted, r.Elapsed.Round(time.Millisecond))
	case r.TimedOut:
		fmt.Fprintf(w, "gocoll run: job timed out after %v", r.Elapsed.Round(time.Millisecond))
		if c := r.culprit(); c >= 0 && r.Hang != nil && r.Hang.Err == nil {
			fmt.Fprintf(w, ": %s", strings.TrimPrefix(r.Hang.Diagnosis.Headline, "gocoll: "))
		} else if c >= 0 {
			fmt.Fprintf(w, ": rank %d on host %s %s", c, r.Ranks[c].Host, r.culpritWhy(c))
		}
		fmt.Fprintf(w, "; stopped ranks %s\n", r.list(func(e RankEnd) bool { return e.Stopped }))
	case r.First >= 0:
		if c := r.culprit(); c >= 0 && c != r.First {
			e := r.Ranks[c]
			fmt.Fprintf(w, "gocoll run: rank %d on host %s held the job up: %s\n", e.Rank, e.Host, r.culpritWhy(c))
		}
		r.reportFirst(w)
	default:
		return
	}
	if others := r.list(func(e RankEnd) bool { return e.Failed && e.Rank != r.First && !e.Stopped }); others != "none" {
		fmt.Fprintf(w, "gocoll run: also failed: %s\n", others)
	}
	if r.First >= 0 && !r.TimedOut && r.Interrupted == 0 {
		if stopped := r.list(func(e RankEnd) bool { return e.Stopped }); stopped != "none" {
			fmt.Fprintf(w, "gocoll run: stopped: %s\n", stopped)
		}
	}
}

func (r *Result) reportFirst(w io.Writer) {
	e := r.Ranks[r.First]
	last := ""
	if e.Summary != "" {
		last = ": " + strings.TrimSpace(e.Summary)
	}
	fmt.Fprintf(w, "gocoll run: rank %d on host %s failed: %s%s\n", e.Rank, e.Host, e.How, last)
	if len(e.Tail) == 0 {
		fmt.Fprintf(w, "gocoll run: rank %d printed nothing\n", e.Rank)
		return
	}
	if len(e.Tail) == 1 && e.Tail[0] == e.Summary {
		return // the line above has said it
	}
	fmt.Fprintf(w, "gocoll run: last %d lines of rank %d:\n", len(e.Tail), e.Rank)
	for _, line := range e.Tail {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

// list names the ranks for which pick is true, "none" if none.
func (r *Result) list(pick func(RankEnd) bool) string {
	var parts []string
	for _, e := range r.Ranks {
		if pick(e) {
			parts = append(parts, fmt.Sprintf("rank %d on %s (%s)", e.Rank, e.Host, e.How))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	const maxListed = 8
	if len(parts) > maxListed {
		parts = append(parts[:maxListed], fmt.Sprintf("and %d more", len(parts)-maxListed))
	}
	return strings.Join(parts, ", ")
}
