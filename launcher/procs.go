package launcher

import (
	"log/slog"
	"runtime"

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
