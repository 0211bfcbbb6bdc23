package launcher

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/topology"
)

// fitGoMaxProcs sets the runtime's GOMAXPROCS to its share of this host's
// processors (Job.FitGoMaxProcs): the current value divided by the ranks
// that run on rank's host in topo.
func fitGoMaxProcs(topo topology.Topology, rank int, log *slog.Logger) {
	ri, ok := topo.Rank(rank)
	if !ok {
		return
	}
	cur := runtime.GOMAXPROCS(0)
	if n := procsPerRank(cur, len(topo.RanksOnHost(ri.Host))); n < cur {
		runtime.GOMAXPROCS(n)
		log.Info("gocoll: GOMAXPROCS fitted to this host's ranks", "from", cur, "to", n)
	}
}

// procsPerRank divides procs among local ranks, giving each at least one.
func procsPerRank(procs, local int) int {
	return max(1, procs/max(1, local))
}

// monitorHold is how long Join holds its processor before it returns where
// this host's ranks outnumber its processors (holdsMonitor). The Go
// runtime's monitor thread (sysmon) starts over at rounds of 20 us whenever
// it wakes from the long sleep it takes while all of a process's Ps are idle
// (a rank waiting for its peers during set-up), or takes a P from a system
// call; it backs off only after 50 rounds that found nothing to do, and
// doubles its sleep from there up to 10 ms: some 4 ms of wake-ups at 20-70 us
// and about 10 ms more of sparser ones. With 4 ranks on 2 cores each of
// those wake-ups takes a core from a rank: a fresh job's first 300-900
// 8-byte AllReduces ran at 5-22 us a call, those after them at 2.5-3
// (bench/results/small_ops.md, Session 22, first22). Held for monitorHold
// (8 ms was not enough), the monitor has backed off before the job's
// first call.
const monitorHold = 20 * time.Millisecond

// monitorNap is the longest single nap of holdMonitor: how long the
// process's other goroutines may wait for this P, and the end of a hold
// for its ctx.
const monitorNap = time.Millisecond

// holdsMonitor reports whether Join holds its processor (holdMonitor) for a
// rank among local ranks of its host (processes: one rank each) that may
// run on cpus processors: where they outnumber the processors, a monitor
// thread's wake-up takes a processor from a rank. settleMonitor passes
// processorsNow, the processors of the process's affinity as Join ends,
// capped by its cgroup CPU quota (usableProcessors): a rank bound to one
// core (at start, or by Join: GOCOLL_BIND_CORE), whose monitor shares that
// core with it, holds wherever its host has other ranks, and so do ranks
// in a container whose quota allows fewer CPUs than its ranks, however
// wide its cpuset.
func holdsMonitor(local, cpus int) bool {
	return local > max(cpus, 1)
}

// holdMonitor keeps the calling goroutine's P busy for d without using a
// processor: it naps in raw system calls (rawNap, of at most monitorNap
// each), which the runtime does not see as system calls, and yields to the
// process's other goroutines between them (runtime.Gosched), so the P is
// never idle nor taken from a system call, and the monitor thread backs
// off instead of starting over (monitorHold). It returns after d, or
// sooner once ctx ends (at most monitorNap later); it reports how long it
// held. Where there is no raw nap (not Linux) it returns at once.
func holdMonitor(ctx context.Context, d time.Duration) time.Duration {
	if !rawNapWorks {
		return 0
	}
	start := time.Now()
	done := ctx.Done()
	for {
		held := time.Since(start)
		if held >= d {
			return held
		}
		select {
		case <-done:
			return held
		default:
		}
		rawNap(min(d-held, monitorNap))
		runtime.Gosched()
	}
}

// settleMonitor is Join's last step: holdMonitor for monitorHold where this
// rank's host in topo holds more ranks than the processors this process
// may run on now (holdsMonitor, processorsNow), and it can hold
// (rawNapWorks).
func settleMonitor(ctx context.Context, topo topology.Topology, rank int, log *slog.Logger) {
	ri, ok := topo.Rank(rank)
	if !ok || !rawNapWorks {
		return
	}
	local := len(topo.RanksOnHost(ri.Host))
	if local <= 1 || !holdsMonitor(local, processorsNow()) { // a lone rank reads no affinity or cgroup
		return
	}
	held := holdMonitor(ctx, monitorHold)
	log.Debug("gocoll: held the processor for the runtime's monitor to back off", "held", held)
}

// processorsNow is how many processors this process may run on now
// (usableProcessors): its affinity mask's (which a bind at Join narrows,
// where runtime.NumCPU keeps the mask the process started with), or
// runtime.NumCPU where the mask cannot be read, capped by its cgroup CPU
// quota (cpuQuota). FitGoMaxProcs has changed GOMAXPROCS by
// then, so the runtime's own reading of the quota is not at hand.
func processorsNow() int {
	cpus, err := affinity.Union([]int{0})
	if err != nil || cpus <= 0 {
		cpus = runtime.NumCPU()
	}
	return usableProcessors(cpus, cpuQuota())
}
