package launcher

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// GOCOLL_PROBE=1: eight ranks (two per host, hosts alternating between
// two sites) measure every level as the world forms, every rank has the
// same figures in its world communicator's topology, and the world works.
func TestProbeAtJoin(t *testing.T) {
	addr := testStore(t)
	const n = 8
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvProbe+"=1") })
	for r, w := range worlds {
		ls := w.topo.Links
		require.NotNil(t, ls, "rank %d", r)
		for l, link := range map[string]any{"host": ls.Host, "site": ls.Site, "wan": ls.WAN} {
			require.NotNil(t, link, "rank %d: %s not measured", r, l)
		}
		require.Equal(t, *worlds[0].topo.Links.WAN, *ls.WAN, "rank %d", r)
		require.Equal(t, *worlds[0].topo.Links.Host, *ls.Host, "rank %d", r)
		require.Positive(t, ls.Site.Bandwidth)
	}
	t.Logf("measured: host %+v, site %+v, wan %+v", *worlds[0].topo.Links.Host, *worlds[0].topo.Links.Site, *worlds[0].topo.Links.WAN)
	done := make(chan error, n)
	for _, w := range worlds {
		go func() { done <- w.Barrier(context.Background()) }()
	}
	for range n {
		require.NoError(t, <-done)
	}
}
