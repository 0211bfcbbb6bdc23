package topology

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHierarchicalTreeTable(t *testing.T) {
	// Sites a (hosts a1: 0, a2: 2) and b (hosts b1: 1 3, b2: 4).
	tr, err := HierarchicalTree(twoSites())
	require.NoError(t, err)
	require.Equal(t, Tree{
		Root:     0,
		Parent:   []int{-1, 0, 0, 1, 1},
		Children: [][]int{{1, 2}, {4, 3}, nil, nil, nil},
	}, tr)

	one, err := HierarchicalTree(Topology{Ranks: []RankInfo{{Rank: 0, Host: "h"}}})
	require.NoError(t, err)
	require.Equal(t, Tree{Root: 0, Parent: []int{-1}, Children: [][]int{nil}}, one)

	_, err = HierarchicalTree(Topology{Ranks: []RankInfo{{Rank: 0}}})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestHierarchicalTreeProperties(t *testing.T) {
	for _, c := range propertyCases(300) {
		topo := c.topo
		tr, err := HierarchicalTree(topo)
		require.NoError(t, err, c.name)
		require.NoError(t, tr.Validate(), c.name)

		byRank, err := New(topo.Ranks)
		require.NoError(t, err)
		info := byRank.Ranks
		siteLeaders := topo.SiteLeaders()
		var hostLeaders []int
		maxHosts, maxLocal := 0, 0
		for _, site := range topo.Sites() {
			maxHosts = max(maxHosts, len(topo.HostsOnSite(site)))
		}
		for _, host := range topo.Hosts() {
			hostLeaders = append(hostLeaders, topo.RanksOnHost(host)[0])
			maxLocal = max(maxLocal, len(topo.RanksOnHost(host)))
		}

		siteEdges, hostEdges := 0, 0
		for r, p := range tr.Parent {
			if p < 0 {
				continue
			}
			if info[r].Site != info[p].Site {
				siteEdges++
				require.True(t, slices.Contains(siteLeaders, r) && slices.Contains(siteLeaders, p),
					"%s: cross-site edge %d-%d not between site leaders", c.name, p, r)
			}
			if info[r].Host != info[p].Host {
				hostEdges++
				require.True(t, slices.Contains(hostLeaders, r) && slices.Contains(hostLeaders, p),
					"%s: cross-host edge %d-%d not between host leaders", c.name, p, r)
			}
		}
		require.Equal(t, len(topo.Sites())-1, siteEdges, c.name)
		require.Equal(t, len(topo.Hosts())-1, hostEdges, c.name)
		require.LessOrEqual(t, tr.Depth(), floorLog2(len(siteLeaders))+floorLog2(maxHosts)+floorLog2(maxLocal), c.name)
	}
}
