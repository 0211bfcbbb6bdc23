package launcher

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/stretchr/testify/require"
)

// World.Topology carries the job's link figures (here GOCOLL_LINKS'), which
// gocoll topo --explain and --dump under a job print, in a copy the caller
// may change without changing the world's.
func TestWorldTopologyKeepsLinks(t *testing.T) {
	const n = 2
	host := &topology.Link{Latency: 3 * time.Microsecond, Bandwidth: 5e9, CPUPerByte: 1e-9}
	cache := FormatLinks(topology.Links{Host: host})
	addr := testStore(t)
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvLinks+"="+cache) })
	require.NotNil(t, worlds[0].topo.Links, "the world's own topology has the figures")
	got := worlds[0].Topology()
	require.NotNil(t, got.Links, "World.Topology() dropped the job's link figures (%+v)", *worlds[0].topo.Links)
	require.Equal(t, host, got.Links.Host)
	got.Links.Host.Bandwidth = 1
	require.Equal(t, host, worlds[0].Topology().Links.Host, "the copy shares the world's figures")
}
