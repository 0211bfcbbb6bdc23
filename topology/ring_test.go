package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRingOrderTable(t *testing.T) {
	uneven := layoutSpec{{2}, {1, 1, 2, 1, 3}, {2, 2}}
	cases := []struct {
		name      string
		topo      Topology
		want      []int
		crossings int
	}{
		{"one rank", buildTopology(layoutSpec{{1}}, identity(1), nil), []int{0}, 0},
		{"one site", buildTopology(layoutSpec{{2, 1}}, []int{2, 0, 1}, nil), []int{0, 2, 1}, 0},
		{"two sites listed out of order", twoSites(), []int{0, 2, 1, 3, 4}, 2},
		// Round robin over sites: site0 gets 0,3; site1 1,4,6,8,10,11,12,13
		// (hosts [1] [4] [6 8] [10] [11 12 13]); site2 2,5,7,9.
		{"uneven interleaved", buildTopology(uneven, interleaved(uneven), nil),
			[]int{0, 3, 1, 4, 6, 8, 10, 11, 12, 13, 2, 5, 7, 9}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring, err := RingOrder(c.topo)
			require.NoError(t, err)
			require.Equal(t, c.want, ring)
			n, err := SiteCrossings(c.topo, ring)
			require.NoError(t, err)
			require.Equal(t, c.crossings, n)
		})
	}
}

func TestSiteCrossingsCountsCyclicLinks(t *testing.T) {
	topo := twoSites() // sites: 0,2 on a; 1,3,4 on b
	for _, c := range []struct {
		ring []int
		want int
	}{
		{[]int{0, 1, 2, 3, 4}, 4}, // a b a b b, then b->a
		{[]int{0, 2, 1, 3, 4}, 2},
		{[]int{1, 3, 4, 0, 2}, 2},
		{[]int{0, 1}, 2}, // a->b and back
		{[]int{1, 3}, 0},
		{[]int{3}, 0},
		{nil, 0},
	} {
		n, err := SiteCrossings(topo, c.ring)
		require.NoError(t, err)
		require.Equal(t, c.want, n, "%v", c.ring)
	}
	n, err := HostCrossings(topo, []int{1, 3, 4})
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

func TestRingRejectsBadInput(t *testing.T) {
	topo := twoSites()
	_, err := SiteCrossings(topo, []int{0, 1, 0})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "ring[2]: rank 0 appears twice")
	_, err = SiteCrossings(topo, []int{0, 5})
	require.ErrorContains(t, err, "ring[1]: rank 5 out of range [0, 5)")
	_, err = RingOrder(Topology{})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = SiteCrossings(Topology{Ranks: []RankInfo{{Rank: 1, Host: "h"}}}, []int{0})
	require.ErrorIs(t, err, ErrInvalid)
}

// bruteForceMinCrossings returns the fewest crossings of any ring over all
// ranks of topo, trying every ring that starts at rank 0.
func bruteForceMinCrossings(t *testing.T, topo Topology, count func(Topology, []int) (int, error)) int {
	n := topo.Size()
	best := n + 1
	ring := identity(n)
	var permute func(k int)
	permute = func(k int) {
		if k == n {
			c, err := count(topo, ring)
			require.NoError(t, err)
			best = min(best, c)
			return
		}
		for i := k; i < n; i++ {
			ring[k], ring[i] = ring[i], ring[k]
			permute(k + 1)
			ring[k], ring[i] = ring[i], ring[k]
		}
	}
	permute(1)
	return best
}

// RingOrder visits every rank once, keeps each site's and each host's ranks
// contiguous, crosses sites exactly S times for S > 1 sites (0 for one), and
// no ring does better (checked by brute force on small topologies).
func TestRingOrderProperties(t *testing.T) {
	for _, c := range propertyCases(300) {
		ring, err := RingOrder(c.topo)
		require.NoError(t, err, c.name)
		require.ElementsMatch(t, identity(c.topo.Size()), ring, c.name)

		sites, hosts := len(c.topo.Sites()), len(c.topo.Hosts())
		wantSites, wantHosts := sites, hosts
		if sites == 1 {
			wantSites = 0
		}
		if hosts == 1 {
			wantHosts = 0
		}
		got, err := SiteCrossings(c.topo, ring)
		require.NoError(t, err)
		require.Equal(t, wantSites, got, c.name)
		got, err = HostCrossings(c.topo, ring)
		require.NoError(t, err)
		require.Equal(t, wantHosts, got, c.name)

		// Within each host, ranks appear in increasing order.
		pos := make([]int, len(ring))
		for i, r := range ring {
			pos[r] = i
		}
		for _, host := range c.topo.Hosts() {
			onHost := c.topo.RanksOnHost(host)
			for i := 1; i < len(onHost); i++ {
				require.Equal(t, pos[onHost[i-1]]+1, pos[onHost[i]], "%s: host %s", c.name, host)
			}
		}

		if c.topo.Size() <= 7 {
			require.Equal(t, bruteForceMinCrossings(t, c.topo, SiteCrossings), wantSites, c.name)
			require.Equal(t, bruteForceMinCrossings(t, c.topo, HostCrossings), wantHosts, c.name)
		}
	}
}
