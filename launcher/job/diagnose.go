package job

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// Why a hang report was gathered (Hang.Why).
const (
	WhyTimeout  = "--timeout"
	WhySignal   = "SIGUSR1"
	WhyDiagnose = "--diagnose"
	WhyStall    = "stall" // a rank's operation passed its stall threshold
)

// Hang is one hang report of a running job: every rank's flight record,
// gathered through the job's store, and what the launcher knows of the
// processes of the ranks that did not answer.
type Hang struct {
	Why       string // WhyTimeout, WhySignal, WhyDiagnose, or WhyStall and the rank
	At        time.Time
	Took      time.Duration // from the request to the last answer (or the wait's end)
	Answered  int           // ranks that answered
	Diagnosis collective.Diagnosis
	// Err is set when the report could not be gathered (the store was
	// not reachable); Diagnosis is then empty.
	Err error
}

// String prints the report: a line saying why and how many ranks
// answered, the diagnosis' headline naming the culprit, and a line per
// rank.
func (h *Hang) String() string {
	var b strings.Builder
	if h.Err != nil {
		fmt.Fprintf(&b, "gocoll run: hang report (%s): %v\n", h.Why, h.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "gocoll run: hang report (%s): %d of %d ranks answered in %v\n", h.Why, h.Answered,
		len(h.Diagnosis.Ranks), h.Took.Round(time.Millisecond))
	b.WriteString(h.Diagnosis.String())
	return b.String()
}

// diagnoser gathers a running job's hang reports.
type diagnoser struct {
	procs []*proc
	// world and base are the job's ranks and this launcher's first (a
	// node of several, Spec.NNodes: procs are ranks base...); world 0:
	// len(procs), base 0.
	world, base int
	out         *lockedWriter
	wait        time.Duration // for the ranks' answers

	mu       sync.Mutex
	kv       store.Store // the job's view of its store; nil until reached
	rank0    bool        // rank 0 serves it
	dialErr  error
	last     *Hang
	stalled  map[[2]uint64]bool // (comm, seq) already reported on a stall
	inFlight bool               // a report is being gathered in the background
	stallMu  sync.Mutex         // one stall notice at a time
	async    sync.WaitGroup     // reports in the background
	drained  bool               // no more of them
}

// goAsync runs fn in the background, unless drain has begun.
func (d *diagnoser) goAsync(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.drained {
		d.async.Go(fn)
	}
}

// drain waits for the reports being gathered in the background, and
// starts no more.
func (d *diagnoser) drain() {
	d.mu.Lock()
	d.drained = true
	d.mu.Unlock()
	d.async.Wait()
}

// connect gives the diagnoser the job's store: the launcher's own (local
// non-nil), or else the one rank 0 serves at p.storeAddr, dialed in the
// background until ctx ends.
func (d *diagnoser) connect(ctx context.Context, p *plan, local store.Store) {
	d.world, d.base = p.worldSize(), p.globalRank(0)
	if local != nil {
		d.kv = launcher.JobStore(local, p.spec.JobID)
		return
	}
	d.rank0 = p.store == StoreRank0
	go func() {
		var c *store.Client
		j, err := rankJob(p, 0)
		if err == nil {
			c, err = store.Dial(ctx, p.storeAddr, store.ClientConfig{JobKey: j.JobKey, RetryMax: 500 * time.Millisecond})
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if err != nil {
			d.dialErr = fmt.Errorf("the job's store at %s is not reachable: %v", p.storeAddr, err)
			return
		}
		context.AfterFunc(ctx, func() { _ = c.Close() })
		d.kv = launcher.JobStore(c, p.spec.JobID)
	}()
}

// rankJob is rank r's launcher.Job as the rank reads it from the
// variables it is started with (the job key included, wherever the plan
// passes it).
func rankJob(p *plan, r int) (launcher.Job, error) {
	env := p.rankVars(r)
	if _, cmdEnv := p.command(r); cmdEnv != nil {
		if key, ok := launcher.LookupIn(cmdEnv)(launcher.EnvJobKey); ok {
			env = append(env, launcher.EnvJobKey+"="+key)
		}
	}
	return launcher.ParseEnv(launcher.LookupIn(env))
}

// store returns the job's store, or why there is none yet.
func (d *diagnoser) store() (store.Store, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.kv != nil:
		return d.kv, nil
	case d.dialErr != nil:
		return nil, d.dialErr
	}
	return nil, fmt.Errorf("the job's store is not reachable yet")
}

// gather asks every rank for its flight record (waiting d.wait at most)
// and diagnoses them; a rank that did not answer gets what the launcher
// knows of its process. It records the report as the latest.
func (d *diagnoser) gather(why string) *Hang {
	h := &Hang{Why: why, At: time.Now()}
	kv, err := d.store()
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), d.wait)
		var records [][]collective.OpRecord
		records, err = launcher.RequestFlightRecords(ctx, kv, d.worldSize())
		cancel()
		h.Took = time.Since(h.At)
		if records != nil {
			err = nil // a rank's bad record counts as no answer
			h.Diagnosis = launcher.DiagnoseRecords(records)
			for r, recs := range records {
				if recs != nil {
					h.Answered++
				} else if pr := d.proc(r); pr != nil && r < len(h.Diagnosis.Ranks) {
					h.Diagnosis.Ranks[r] += pr.whyNoAnswer()
				}
			}
		}
	}
	if pr := d.proc(0); err != nil && d.rank0 && pr != nil {
		err = fmt.Errorf("%v (rank 0 serves the job's store%s)", err, pr.whyNoAnswer())
	}
	h.Err = err
	d.mu.Lock()
	if h.Err == nil {
		d.last = h
	}
	d.mu.Unlock()
	return h
}

// report gathers a report and prints it; but a periodic one (--diagnose)
// whose only missing answers are from ranks that have ended is the job
// ending, not news, and is not printed.
func (d *diagnoser) report(why string) *Hang {
	h := d.gather(why)
	if why != WhyDiagnose || h.Err != nil || !d.missingEnded(h) {
		d.out.writeText(h.String())
	}
	return h
}

// missingEnded reports whether some rank did not answer h and every such
// rank has ended.
func (d *diagnoser) missingEnded(h *Hang) bool {
	if h.Answered == d.worldSize() {
		return false
	}
	for r, line := range h.Diagnosis.Ranks {
		if pr := d.proc(r); strings.Contains(line, ": did not answer") && (pr == nil || !pr.hasEnded()) {
			return false
		}
	}
	return true
}

// reportAsync gathers and prints a report in the background, unless one
// is being gathered already.
func (d *diagnoser) reportAsync(why string) {
	d.mu.Lock()
	busy := d.inFlight
	d.inFlight = true
	d.mu.Unlock()
	if busy {
		return
	}
	d.goAsync(func() {
		d.report(why)
		d.mu.Lock()
		d.inFlight = false
		d.mu.Unlock()
	})
}

// reuseWithin is how recent a report must be for a stall notice to be
// answered with it rather than with a new one: every rank waiting in a
// stuck operation stalls at about the same time.
const reuseWithin = 2 * time.Second

// onStall answers stall notice s of rank: with a report, printed once per
// stuck operation, and with its headline in the store, which the rank
// prints (launcher.PostVerdict). Notices are handled one at a time, kv is
// the job's store.
func (d *diagnoser) onStall(kv store.Store, s int64, rank int) {
	d.stallMu.Lock()
	defer d.stallMu.Unlock()
	h := d.latest()
	if h == nil || time.Since(h.At) > reuseWithin {
		h = d.gather(fmt.Sprintf("%s of rank %d", WhyStall, rank))
	}
	if h.Err != nil {
		d.out.writeText(h.String())
		return
	}
	op := [2]uint64{h.Diagnosis.Op.Comm, h.Diagnosis.Op.Seq}
	d.mu.Lock()
	seen := !h.Diagnosis.Stuck || d.stalled[op]
	d.stalled[op] = d.stalled[op] || h.Diagnosis.Stuck
	d.mu.Unlock()
	if !seen {
		d.out.writeText(h.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = launcher.PostVerdict(ctx, kv, s, h.Diagnosis.Headline) // the rank waits 3 s at most
}

// followStalls reports on the ranks' stall notices until ctx ends.
func (d *diagnoser) followStalls(ctx context.Context) {
	for ctx.Err() == nil {
		kv, err := d.store()
		if err == nil {
			_ = launcher.StallNotices(ctx, kv, func(s int64, rank int) { d.goAsync(func() { d.onStall(kv, s, rank) }) })
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// latest is the last report gathered, or nil.
func (d *diagnoser) latest() *Hang {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// hasEnded reports whether the process has been reaped.
func (p *proc) hasEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reaped
}

// worldSize is the number of ranks a report asks.
func (d *diagnoser) worldSize() int {
	if d.world == 0 {
		return len(d.procs)
	}
	return d.world
}

// proc is the job's rank r if this launcher started it, else nil.
func (d *diagnoser) proc(r int) *proc {
	if i := r - d.base; i >= 0 && i < len(d.procs) {
		return d.procs[i]
	}
	return nil
}
