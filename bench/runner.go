package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// plan is a validated benchmark: what every rank runs.
type plan struct {
	colls    []collKind
	sizes    []int64 // requested sizes in bytes, ascending
	dts      []dtype.DataType
	ops      []reduce.Op
	roots    []int
	allRoots bool // every rank as the root in turn, instead of roots
	agg      int  // calls per timed iteration (-m)
	blocking bool // wait for each call before the next (-z 1)
	iters    int
	warmup   int
	schedule float64       // Options.PeersSchedule: iterations per size as the peers'; 0: iters and warmup
	checks   int           // checked calls per measurement (0: no check)
	roundUp  bool          // AllToAll rounds a size up to one element per block
	peers    bool          // measure only the variant the peers table shows
	average  int           // Options.Average: how the ranks' times combine
	cycles   int           // Options.Cycles: sweeps of every collective and size; 0 until ctx ends
	settle   time.Duration // Options.Settle: spun before the first measurement
	fresh    bool          // Options.Fresh: each call's send data differs from the last's
}

// wants reports whether the plan measures variant v of collective k.
func (p *plan) wants(k collKind, v variant) bool {
	if v == inPlace && !k.info().inPlace {
		return false
	}
	return !p.peers || v == peersVariant(k)
}

// maxBytes is the largest buffer any size of the plan needs over n ranks.
func (p *plan) maxBytes(n int) int64 {
	var m int64
	for _, k := range p.colls {
		for _, dt := range p.dts {
			for _, s := range p.sizes {
				m = max(m, k.info().geometryFor(s, dt, n, p.roundUp && k == collAllToAll).bytes)
			}
		}
	}
	return m
}

// buffers is how many pairs of send and receive buffers a rank needs:
// one for each call in flight at once.
func (p *plan) buffers() int {
	if p.blocking {
		return 1
	}
	return p.agg
}

// measurement is one variant of one size on one rank, or over all ranks.
type measurement struct {
	ran    bool
	timeUs float64    // mean time per call (max over ranks once combined)
	wrong  int64      // wrong elements in the checked calls (summed over ranks)
	steal  stealShare // the host's CPU the hypervisor took during the timed calls (max over ranks)
}

// result is one size of one collective, combined over all ranks.
type result struct {
	coll    collKind
	geo     geometry
	dt      dtype.DataType
	op      reduce.Op // 0 for collectives that do not reduce
	root    int       // -1 for collectives without a root
	ranks   int
	meas    [numVariants]measurement
	rssPeak int64 // the largest peak resident set of any rank so far, bytes
}

// endHook, when set (by tests), is called by each rank as its timed calls
// end (allEnded false) and again once every rank's have (allEnded true),
// before anything else it does after them.
var endHook func(rank int, allEnded bool)

// corruptHook, when set (by tests), may damage a checked call's output
// before it is verified, to prove that wrong values are counted.
var corruptHook func(k collKind, rank int, recv []byte)

// member is one rank of a benchmark: its communicator and its buffers,
// allocated once at the plan's largest size and reused for every size.
type member struct {
	comm               *collective.Comm
	plan               *plan
	sendBufs, recvBufs [][]byte  // plan.buffers() of each
	prog               *progress // rank 0's, else nil
}

// run measures every collective and size of the plan, plan.cycles times
// (0: until ctx ends). Rank 0 passes each combined result to emit as soon
// as it is known; other ranks pass nil.
func (r *member) run(ctx context.Context, emit func(result) error) error {
	if err := settle(ctx, r.plan.settle); err != nil {
		return err
	}
	for cycle := 0; r.plan.cycles == 0 || cycle < r.plan.cycles; cycle++ {
		for _, k := range r.plan.colls {
			for _, c := range r.plan.cases(k, r.comm.Size()) {
				for _, size := range r.plan.sizes {
					res, err := r.measureSize(ctx, k, c, size)
					if err != nil {
						return fmt.Errorf("%s at %d bytes: %w", k, size, err)
					}
					if emit != nil {
						if err := emit(res); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// measureSize runs both variants of one size and combines them over ranks.
func (r *member) measureSize(ctx context.Context, k collKind, c testCase, size int64) (result, error) {
	p, info, n := r.plan, k.info(), r.comm.Size()
	res := result{coll: k, dt: c.dt, op: c.op, root: c.root, ranks: n,
		geo: info.geometryFor(size, c.dt, n, p.roundUp && k == collAllToAll)}
	for v := range numVariants {
		if !p.wants(k, v) {
			continue
		}
		m, err := r.measure(ctx, k, c, res.geo, v)
		if err != nil {
			return res, fmt.Errorf("%s: %w", v, err)
		}
		res.meas[v] = m
	}
	return res, r.combine(ctx, &res)
}

// settleHook, when set (by tests), is called by settle with its duration
// once its spin is over.
var settleHook func(d time.Duration)

// settle spins for d (Options.Settle), reading the clock every 4096
// rounds of a loop that makes no system call, or until ctx ends: its
// error then.
func settle(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		if err := ctx.Err(); err != nil {
			return err
		}
		for range 4096 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	settleSink.Store(x)
	if settleHook != nil {
		settleHook(d)
	}
	return nil
}

// settleSink keeps settle's loop from being optimized away.
var settleSink atomic.Uint64

// loops returns the warm-up and timed iterations of a size: p.warmup and
// p.iters, or the peers' schedule for it.
func (p *plan) loops(bytes int64) (warmup, iters int) {
	if p.schedule > 0 {
		return PeersLoops(bytes, p.schedule)
	}
	return p.warmup, p.iters
}

// measure times the size's iterations (plan.loops) of p.agg calls each
// after its warm-up iterations, then checks p.checks calls.
func (r *member) measure(ctx context.Context, k collKind, c testCase, g geometry, v variant) (measurement, error) {
	p, n, me := r.plan, r.comm.Size(), r.comm.Rank()
	args := make([]opArgs, len(r.sendBufs))
	for i := range args {
		send, recv := k.buffers(g, n, me, v, r.sendBufs[i], r.recvBufs[i])
		args[i] = opArgs{comm: r.comm, send: send, recv: recv, dt: c.dt, op: c.op, root: c.root}
	}
	chk := checker{kind: k, pat: newPattern(c.dt, c.op, k.info().reduces, n), codec: codecOf(c.dt),
		ranks: n, rank: me, root: c.root, block: g.block / int64(c.dt.Size())}
	for _, a := range args {
		chk.prepare(a.send, a.recv)
	}
	warmup, iters := p.loops(g.bytes)
	for range warmup {
		if err := r.iteration(ctx, k, args); err != nil {
			return measurement{}, err
		}
	}
	// The host's CPU times are read before the Barrier, not between it
	// and the clock: reading /proc/stat took 13-110 us a rank on this
	// project's 2-core VM, and a rank whose first timed call waits for
	// the root waited for the root's read too (small_ops.md, Session 16,
	// bcast8b). Nothing but the clock read follows the Barrier, as in
	// mpi_coll_bench.c (MPI_Barrier, MPI_Wtime).
	cpu0, ok0 := readCPUTimes()
	if err := r.comm.Barrier(ctx); err != nil {
		return measurement{}, err
	}
	start := time.Now()
	for i := range iters {
		if err := r.iteration(ctx, k, args); err != nil {
			return measurement{}, err
		}
		r.prog.iteration(k, g.bytes, i+1, iters)
	}
	elapsed := time.Since(start)
	if endHook != nil {
		endHook(me, false)
	}
	// Every rank waits here for the others to end their timed calls, as
	// mpi_coll_bench.c's ranks do in the collective after its loop. A rank
	// that ended first would otherwise read the CPU times and refill its
	// buffers for the checked calls (tens of microseconds to milliseconds
	// of computing that yields nowhere) on a core a slower rank needs for
	// its last timed call: with 4 ranks on 2 cores that call took 1-2 ms
	// against 185 us for the others, a 1 MiB AllToAll's mean over 50 calls
	// 231-244 us against 200-204 with this wait (bench/results/
	// shm_large.md, session 24). Its clock was read above: the wait is not
	// timed.
	if err := r.comm.Barrier(ctx); err != nil {
		return measurement{}, err
	}
	if endHook != nil {
		endHook(me, true)
	}
	cpu1, ok1 := readCPUTimes()
	m := measurement{ran: true, timeUs: float64(elapsed.Nanoseconds()) / 1e3 / float64(iters*p.agg),
		steal: stealOver(cpu0, cpu1, ok0 && ok1)}
	send, recv := args[0].send, args[0].recv
	for range p.checks {
		chk.prepare(send, recv)
		if err := k.call(ctx, args[0]); err != nil {
			return measurement{}, err
		}
		if corruptHook != nil {
			corruptHook(k, me, recv)
		}
		m.wrong += chk.wrong(recv)
	}
	return m, nil
}

// iteration runs one timed iteration: p.agg calls of k, one after the
// other when blocking, else all issued at once, call i on args[i], and
// waited for together.
func (r *member) iteration(ctx context.Context, k collKind, args []opArgs) error {
	if len(args) == 1 {
		for range r.plan.agg {
			r.beforeCall(k, args[0].send)
			if err := k.call(ctx, args[0]); err != nil {
				return err
			}
		}
		return nil
	}
	var handles []*collective.Handle
	for _, a := range args {
		r.beforeCall(k, a.send)
		handles = append(handles, k.start(ctx, a)...)
	}
	var first error
	for _, h := range handles {
		if err := h.Wait(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// beforeCall prepares send for a timed or warm-up call of k: with
// Options.Fresh it changes bit 0 of the first byte of each freshPage
// bytes, so that the call's data differs from the previous call's on
// every page. The pattern's elements are small non-negative integers
// (pattern.go), whose low bit flips without making a NaN or an Inf.
func (r *member) beforeCall(k collKind, send []byte) {
	if r.plan.fresh {
		for i := 0; i < len(send); i += freshPage {
			send[i] ^= 1
		}
	}
	if callHook != nil {
		callHook(r.comm.Rank(), k, send)
	}
}

// freshPage is the stride of Options.Fresh's writes: a page, the block of
// collective's copyChanged.
const freshPage = 4096

// callHook, when set (by tests), sees each timed and warm-up call's rank
// and send buffer just before the call.
var callHook func(rank int, k collKind, send []byte)

// combine replaces this rank's figures in res by the time -a chooses
// (Options.Average: by default the maximum), the maximum steal
// share (each field: unknown, -1, loses) and peak RSS and the total wrong
// count over all ranks. Ranks on one host see the same steal; across
// hosts the worst host's counts.
func (r *member) combine(ctx context.Context, res *result) error {
	times := []float64{res.meas[outOfPlace].timeUs, res.meas[inPlace].timeUs, float64(peakRSS())}
	const stealAt = 3 // times[stealAt+3v:] is variant v's steal share
	for v := range numVariants {
		s := res.meas[v].steal
		times = append(times, s.pct, s.ticks, s.cpuTicks)
	}
	if err := r.averageTimes(ctx, times[:2]); err != nil {
		return fmt.Errorf("combining times: %w", err)
	}
	reported := [2]float64{times[0], times[1]}
	wrong := []int64{res.meas[outOfPlace].wrong, res.meas[inPlace].wrong}
	if err := collective.AllReduce(ctx, r.comm, times, times, collective.Max); err != nil {
		return fmt.Errorf("combining times: %w", err)
	}
	if err := collective.AllReduce(ctx, r.comm, wrong, wrong, collective.Sum); err != nil {
		return fmt.Errorf("combining wrong counts: %w", err)
	}
	for v := range numVariants {
		res.meas[v].timeUs, res.meas[v].wrong = reported[v], wrong[v]
		t := times[stealAt+3*int(v):]
		res.meas[v].steal = stealShare{pct: t[0], ticks: t[1], cpuTicks: t[2]}
	}
	res.rssPeak = int64(times[2])
	return nil
}

// averageTimes turns this rank's times into the reported ones, as
// Options.Average says, on every rank.
func (r *member) averageTimes(ctx context.Context, times []float64) error {
	switch r.plan.average {
	case AverageRank0:
		return collective.Broadcast(ctx, r.comm, times, times, 0)
	case AverageMean:
		return collective.AllReduce(ctx, r.comm, times, times, collective.Avg)
	case AverageMin:
		return collective.AllReduce(ctx, r.comm, times, times, collective.Min)
	}
	return collective.AllReduce(ctx, r.comm, times, times, collective.Max)
}
