package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// newPlan turns validated options into the plan every rank of a world of
// n ranks runs, or reports an option that does not fit the world.
func newPlan(o Options, n int) (*plan, error) {
	if o.Root >= n && !o.AllRoots {
		return nil, fmt.Errorf("-r (root) %d is not a rank of a world of %d", o.Root, n)
	}
	kinds, err := parseColls(joinNames(o.Colls))
	if err != nil {
		return nil, err
	}
	peers := o.Format == "peers"
	dts, ops, roots := planChoices(o)
	return &plan{colls: kinds, sizes: o.sweep(), dts: dts, ops: ops, roots: roots, allRoots: o.AllRoots,
		agg: o.AggIters, blocking: o.Blocking == 1, iters: o.Iters, warmup: o.Warmup, schedule: o.PeersSchedule, checks: o.Check, roundUp: peers, peers: peers, average: o.Average,
		cycles: o.Cycles, settle: o.Settle, fresh: o.Fresh}, nil
}

// checkMemory refuses a plan whose buffers (two per rank, of the largest
// size) for ranksHere ranks on this machine would not fit in its RAM.
func checkMemory(p *plan, ranks, ranksHere int) error {
	need := 2 * p.maxBytes(ranks) * int64(p.buffers()) * int64(ranksHere)
	if ram := physicalMemory(); ram > 0 && need > ram {
		return fmt.Errorf("the buffers of %d ranks need %d MiB, more than this machine's %d MiB of RAM; lower -e",
			ranksHere, need>>20, ram>>20)
	}
	return nil
}

// commConfig is the communicator configuration the options ask for: --algo
// forced on every collective the communicator lets choose that has it (the
// options were checked against each benchmarked collective's list).
func commConfig(o Options) collective.Config {
	cfg := collective.Config{Timeout: o.Timeout}
	if o.Algo == collective.AlgoAuto {
		return cfg
	}
	forced := []struct {
		coll collKind
		algo *collective.Algorithm
	}{{collAllReduce, &cfg.AllReduce}, {collBroadcast, &cfg.Broadcast}, {collReduce, &cfg.Reduce},
		{collAllGather, &cfg.AllGather}, {collReduceScatter, &cfg.ReduceScatter}}
	for _, f := range forced {
		if slices.Contains(f.coll.info().algos, o.Algo) {
			*f.algo = o.Algo
		}
	}
	return cfg
}

// progress writes a line to w now and then while a long run goes on.
type progress struct {
	w           io.Writer
	start, last time.Time
	done, total int
	// due is set by timer when the next line is due (progressAfter into
	// the run, then progressEvery after the last line). The timed loop
	// loads it once per call and reads the clock only when it is set (and
	// at its first call, which arms timer), as mpi_coll_bench reads none
	// in its timed loop; however long the calls take, a line comes about
	// once per progressEvery.
	due   atomic.Bool
	timer *time.Timer
	now   func() time.Time // the clock; nil for time.Now (tests count its reads)
}

// progressAfter and progressEvery: a run shorter than progressAfter prints
// no progress; a longer one prints at most one line per progressEvery.
const (
	progressAfter = 2 * time.Second
	progressEvery = time.Second
)

// iteration notes that iteration done of total of one size of coll has
// ended: a size that runs long says how far it is, at the same pace.
func (p *progress) iteration(coll collKind, bytes int64, done, total int) {
	if p == nil || p.w == nil {
		return // a rank that reports nothing reads no clock per call
	}
	if p.timer != nil && !p.due.Load() {
		return
	}
	p.due.Store(false)
	now := p.clock()
	if now.Sub(p.start) >= progressAfter && now.Sub(p.last) >= progressEvery {
		p.last = now
		fmt.Fprintf(p.w, "# gocoll bench: %s %d B: timed iteration %d of %d, %.1f s\n", coll, bytes, done, total, now.Sub(p.start).Seconds())
	}
	// The next line is due progressAfter into the run and progressEvery
	// after the last (step's lines count too).
	wait := max(p.start.Add(progressAfter).Sub(now), p.last.Add(progressEvery).Sub(now))
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, func() { p.due.Store(true) })
	} else {
		p.timer.Reset(wait)
	}
}

func (p *progress) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

func (p *progress) step(r result) {
	p.done++
	now := p.clock()
	if p.w == nil || now.Sub(p.start) < progressAfter || now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "# gocoll bench: %s %d B done (%d of %d), %.1f s\n", r.coll, r.geo.bytes, p.done, p.total, now.Sub(p.start).Seconds())
}

// runMember runs one rank of a benchmark. Rank 0 writes the report to rep
// and progress lines to progressTo, and returns the number of wrong values
// over all ranks; other ranks pass nil and return 0.
func runMember(ctx context.Context, comm *collective.Comm, p *plan, rep reporter, progressTo io.Writer) (int64, error) {
	size := p.maxBytes(comm.Size())
	m := &member{comm: comm, plan: p}
	// Every buffer is carved from one arena, page-aligned, as a C peer's
	// come from one heap. With transparent huge pages a buffer below 2 MiB
	// then lies on a huge page too, as mpi_coll_bench's do in
	// ../shared/peers' mpi-shm-thp (glibc's THP heap, buffers malloc'd at
	// the largest size); shared memory's receiver copy feels it most:
	// reading 1 MiB from huge pages ran at 14.5 GB/s against 9.8 GB/s from
	// 4 KiB pages on this host (process_vm_readv, best of 200).
	count, stride := 2*p.buffers(), (size+4095)&^4095
	arena, free, err := allocBuffer(stride * int64(count))
	if err != nil {
		return 0, err
	}
	for i := range count {
		off := int64(i) * stride
		buf := arena[off : off+size : off+size]
		poison(buf) // fault every page in before anything is timed
		if len(m.sendBufs) == len(m.recvBufs) {
			m.sendBufs = append(m.sendBufs, buf)
		} else {
			m.recvBufs = append(m.recvBufs, buf)
		}
	}
	wrong, err := m.runAndReport(ctx, rep, progressTo)
	if err == nil { // after a failure a transport might still hold a buffer
		free()
	}
	return wrong, err
}

// runAndReport runs the plan and, on rank 0, reports it.
func (m *member) runAndReport(ctx context.Context, rep reporter, progressTo io.Writer) (int64, error) {
	var emit func(result) error
	var wrong int64
	if rep != nil {
		if err := rep.begin(); err != nil {
			return 0, err
		}
		now := time.Now()
		total := 0
		for _, k := range m.plan.colls {
			total += len(m.plan.cases(k, m.comm.Size())) * len(m.plan.sizes)
		}
		prog := &progress{w: progressTo, start: now, last: now, total: total}
		m.prog = prog
		emit = func(r result) error {
			for _, v := range r.meas {
				wrong += v.wrong
			}
			prog.step(r)
			return rep.row(r)
		}
	}
	if err := m.run(ctx, emit); err != nil {
		return 0, err
	}
	mine := []int64{peakRSS()}
	all := make([]int64, m.comm.Size())
	if err := collective.AllGather(ctx, m.comm, mine, all); err != nil {
		return 0, fmt.Errorf("gathering peak RSS: %w", err)
	}
	if rep != nil {
		if err := rep.end(summary{rssByRank: all}); err != nil {
			return 0, err
		}
	}
	return wrong, nil
}
