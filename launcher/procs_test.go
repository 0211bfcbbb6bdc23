package launcher

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// hostsOf places ranks on hosts h0, h1, ... perHost[i] of them on host i,
// numbered host by host.
func hostsOf(perHost ...int) topology.Topology {
	var t topology.Topology
	for h, n := range perHost {
		for l := range n {
			t.Ranks = append(t.Ranks, topology.RankInfo{Rank: len(t.Ranks), Host: fmt.Sprint("h", h), LocalRank: l})
		}
	}
	return t
}

func TestProcsPerRank(t *testing.T) {
	for _, tc := range []struct{ procs, local, want int }{
		{2, 4, 1}, {8, 4, 2}, {2, 1, 2}, {3, 2, 1}, {1, 8, 1}, {16, 0, 16}, {64, 3, 21},
	} {
		require.Equal(t, tc.want, procsPerRank(tc.procs, tc.local), "%+v", tc)
	}
}

// fitGoMaxProcs divides the processors among the ranks of this rank's
// host only, and never raises GOMAXPROCS.
func TestFitGoMaxProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		topo      topology.Topology
		rank      int
		from, got int
	}{
		{hostsOf(4), 0, 8, 2},
		{hostsOf(2, 6), 0, 8, 4},
		{hostsOf(2, 6), 3, 8, 1},
		{hostsOf(1, 1), 1, 8, 8},
		{hostsOf(4), 2, 1, 1},
	} {
		runtime.GOMAXPROCS(tc.from)
		fitGoMaxProcs(tc.topo, tc.rank, log)
		require.Equal(t, tc.got, runtime.GOMAXPROCS(0), "%+v", tc)
	}
}

func TestParseEnvFitGoMaxProcs(t *testing.T) {
	base := []string{EnvRank + "=0", EnvWorldSize + "=1", EnvInsecure + "=1"}
	j, err := ParseEnv(LookupIn(base))
	require.NoError(t, err)
	require.True(t, j.FitGoMaxProcs)
	j, err = ParseEnv(LookupIn(append(base, EnvGoMaxProcs+"=3")))
	require.NoError(t, err)
	require.False(t, j.FitGoMaxProcs)
}
