package topology

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// twoSites is rank 0,2 on site a (hosts a1, a2), rank 1,3,4 on site b
// (hosts b1, b1, b2), listed out of order.
func twoSites() Topology {
	return Topology{Ranks: []RankInfo{
		{Rank: 4, Host: "b2", Site: "b"},
		{Rank: 1, Host: "b1", Site: "b"},
		{Rank: 0, Host: "a1", Site: "a"},
		{Rank: 3, Host: "b1", Site: "b", LocalRank: 1},
		{Rank: 2, Host: "a2", Site: "a"},
	}}
}

func TestLookups(t *testing.T) {
	topo := twoSites()
	require.NoError(t, topo.Validate())
	require.Equal(t, 5, topo.Size())
	require.Equal(t, []string{"a", "b"}, topo.Sites())
	require.Equal(t, []string{"a1", "b1", "a2", "b2"}, topo.Hosts())
	require.Equal(t, []string{"b1", "b2"}, topo.HostsOnSite("b"))
	require.Equal(t, []int{0, 2}, topo.RanksOnSite("a"))
	require.Equal(t, []int{1, 3, 4}, topo.RanksOnSite("b"))
	require.Nil(t, topo.RanksOnSite("c"))
	require.Equal(t, []int{1, 3}, topo.RanksOnHost("b1"))
	require.Equal(t, 2, topo.LocalSize(3))
	require.Equal(t, 1, topo.LocalSize(4))
	require.Equal(t, 0, topo.LocalSize(7))
	require.Equal(t, []int{0, 1}, topo.SiteLeaders())
	ri, ok := topo.Rank(3)
	require.True(t, ok)
	require.Equal(t, "b1", ri.Host)
	_, ok = topo.Rank(5)
	require.False(t, ok)
}

func TestDefaultSite(t *testing.T) {
	in := []RankInfo{{Rank: 1, Host: "h", LocalRank: 1}, {Rank: 0, Host: "h", Site: ""}}
	topo, err := New(in)
	require.NoError(t, err)
	require.Equal(t, []string{DefaultSite}, topo.Sites())
	require.Equal(t, []int{0, 1}, topo.RanksOnSite(""))
	require.Equal(t, DefaultSite, topo.Ranks[0].Site)
	require.Equal(t, 0, topo.Ranks[0].Rank, "New sorts by rank")
	require.Empty(t, in[1].Site, "New must not modify its argument")

	// An explicit "default" and an empty site are the same site.
	mixed := Topology{Ranks: []RankInfo{{Rank: 0, Host: "h"}, {Rank: 1, Host: "h", Site: DefaultSite, LocalRank: 1}}}
	require.NoError(t, mixed.Validate())
}

func TestNewCopies(t *testing.T) {
	in := []RankInfo{{Rank: 0, Host: "h", NICs: []NIC{{Name: "eth0", Addrs: []string{"10.0.0.1/8"}}}}}
	topo, err := New(in)
	require.NoError(t, err)
	in[0].NICs[0].Addrs[0] = "changed"
	require.Equal(t, "10.0.0.1/8", topo.Ranks[0].NICs[0].Addrs[0])
}

func TestValidateRejects(t *testing.T) {
	ok := func() []RankInfo {
		return []RankInfo{{Rank: 0, Host: "h0", Site: "s"}, {Rank: 1, Host: "h1", Site: "s"}}
	}
	cases := []struct {
		name   string
		edit   func(r []RankInfo) []RankInfo
		errSub string
	}{
		{"no ranks", func([]RankInfo) []RankInfo { return nil }, "no ranks"},
		{"rank out of range", func(r []RankInfo) []RankInfo { r[1].Rank = 2; return r }, "rank 2 out of range [0, 2)"},
		{"negative rank", func(r []RankInfo) []RankInfo { r[0].Rank = -1; return r }, "rank -1 out of range"},
		{"duplicate rank", func(r []RankInfo) []RankInfo { r[1].Rank = 0; return r }, "ranks[0] and ranks[1] are both rank 0"},
		{"empty host", func(r []RankInfo) []RankInfo { r[1].Host = ""; return r }, "ranks[1] (rank 1): empty host"},
		{"host on two sites", func(r []RankInfo) []RankInfo { r[1].Host, r[1].Site, r[1].LocalRank = "h0", "t", 1; return r },
			`host "h0" is on site "s" (rank 0) and on site "t" (rank 1)`},
		{"empty site vs named site", func(r []RankInfo) []RankInfo { r[1].Host, r[1].Site, r[1].LocalRank = "h0", "", 1; return r },
			`on site "default" (rank 1)`},
		{"duplicate local rank", func(r []RankInfo) []RankInfo { r[1].Host = "h0"; return r }, "both have local rank 0"},
		{"local rank gap", func(r []RankInfo) []RankInfo { r[1].Host, r[1].LocalRank = "h0", 2; return r }, "local rank 2, outside [0, 2)"},
		{"negative local rank", func(r []RankInfo) []RankInfo { r[1].LocalRank = -1; return r }, "local rank -1"},
		{"control character", func(r []RankInfo) []RankInfo { r[0].Host = "h\x00h"; return r }, "unprintable"},
		{"trailing space", func(r []RankInfo) []RankInfo { r[0].Site = "s "; return r }, "trailing space"},
		{"invalid utf8", func(r []RankInfo) []RankInfo { r[0].Addr = "\xff"; return r }, "not valid UTF-8"},
		{"long name", func(r []RankInfo) []RankInfo { r[0].Host = strings.Repeat("x", MaxNameBytes+1); return r }, "more than the limit"},
		{"nic without name", func(r []RankInfo) []RankInfo { r[0].NICs = []NIC{{MTU: 1500}}; return r }, "nics[0]: empty name"},
		{"bad mtu", func(r []RankInfo) []RankInfo { r[0].NICs = []NIC{{Name: "e", MTU: -1}}; return r }, "MTU -1"},
		{"bad address", func(r []RankInfo) []RankInfo { r[0].NICs = []NIC{{Name: "e", Addrs: []string{"10.0.0.1"}}}; return r },
			"not a CIDR prefix"},
		{"too many nics", func(r []RankInfo) []RankInfo { r[0].NICs = make([]NIC, MaxNICs+1); return r }, "NICs, more than the limit"},
		{"negative cache", func(r []RankInfo) []RankInfo { r[0].CPU.L2Bytes = -1; return r }, "cpu: l2_bytes is -1"},
		{"negative cores", func(r []RankInfo) []RankInfo { r[1].CPU.LogicalCores = -4; return r }, "logical_cores"},
		{"negative job cores", func(r []RankInfo) []RankInfo { r[1].CPU.Cores = -1; return r }, "cpu: cores is -1"},
		{"unprintable machine", func(r []RankInfo) []RankInfo { r[0].CPU.Machine = "m\x01"; return r }, "machine"},
		{"bad cpu list", func(r []RankInfo) []RankInfo { r[0].CPU.CPUs, r[0].CPU.Cores = "3-1", 3; return r }, `cpus: cpu list "3-1"`},
		{"cpu list beyond the mask", func(r []RankInfo) []RankInfo { r[0].CPU.CPUs, r[0].CPU.Cores = "1024", 1; return r }, "[0, 1023]"},
		{"cpus not cores", func(r []RankInfo) []RankInfo { r[0].CPU.CPUs, r[0].CPU.Cores = "0-3", 2; return r }, "lists 4 CPUs but cores is 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo := Topology{Ranks: c.edit(ok())}
			err := topo.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, c.errSub)
			_, err = New(topo.Ranks)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
	require.NoError(t, Topology{Ranks: ok()}.Validate(), "the unedited base case must be valid")
}

// The generated property-test topologies are valid, and every lookup is
// independent of the order of Ranks and agrees with a direct computation.
func TestLookupProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range propertyCases(200) {
		topo := c.topo
		require.NoError(t, topo.Validate(), c.name)
		require.Len(t, topo.Sites(), len(c.spec), c.name)

		shuffled := Topology{Ranks: slices.Clone(topo.Ranks)}
		rng.Shuffle(len(shuffled.Ranks), func(a, b int) {
			shuffled.Ranks[a], shuffled.Ranks[b] = shuffled.Ranks[b], shuffled.Ranks[a]
		})
		require.Equal(t, topo.Sites(), shuffled.Sites(), c.name)
		require.Equal(t, topo.Hosts(), shuffled.Hosts(), c.name)

		// Sites in first-appearance order by rank.
		var want []string
		for r := range topo.Size() {
			ri, ok := topo.Rank(r)
			require.True(t, ok)
			if !slices.Contains(want, ri.Site) {
				want = append(want, ri.Site)
			}
			require.Equal(t, len(topo.RanksOnHost(ri.Host)), topo.LocalSize(r))
			require.Contains(t, topo.RanksOnSite(ri.Site), r)
		}
		require.Equal(t, want, topo.Sites(), c.name)

		total := 0
		for i, site := range topo.Sites() {
			ranks := topo.RanksOnSite(site)
			require.True(t, slices.IsSorted(ranks))
			require.Equal(t, ranks[0], topo.SiteLeaders()[i])
			total += len(ranks)
		}
		require.Equal(t, topo.Size(), total, c.name)
	}
}
