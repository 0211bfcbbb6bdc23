package topology

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAssignRanksTable(t *testing.T) {
	// Site A's hosts are not adjacent in the list; they are still numbered
	// together, before site B.
	got, err := AssignRanks([]HostSlots{
		{Host: "a1", Site: "A", Addr: "10.0.0.1", Slots: 2},
		{Host: "b1", Site: "B", Slots: 1},
		{Host: "a2", Site: "A", Slots: 1},
		{Host: "c1", Slots: 2},
	})
	require.NoError(t, err)
	require.Equal(t, []Placement{
		{Rank: 0, Host: "a1", Site: "A", Addr: "10.0.0.1", LocalRank: 0},
		{Rank: 1, Host: "a1", Site: "A", Addr: "10.0.0.1", LocalRank: 1},
		{Rank: 2, Host: "a2", Site: "A", LocalRank: 0},
		{Rank: 3, Host: "b1", Site: "B", LocalRank: 0},
		{Rank: 4, Host: "c1", Site: DefaultSite, LocalRank: 0},
		{Rank: 5, Host: "c1", Site: DefaultSite, LocalRank: 1},
	}, got)
}

func TestAssignRanksRejects(t *testing.T) {
	for _, c := range []struct {
		hosts  []HostSlots
		errSub string
	}{
		{nil, "no hosts"},
		{[]HostSlots{{Host: "", Slots: 1}}, "hosts[0]: empty host"},
		{[]HostSlots{{Host: "h", Slots: 0}}, `host "h" has 0 slots`},
		{[]HostSlots{{Host: "h", Slots: -2}}, "-2 slots"},
		{[]HostSlots{{Host: "h", Slots: 1}, {Host: "g", Slots: 1}, {Host: "h", Site: "x", Slots: 1}},
			`host "h" is listed twice, at hosts[0] and hosts[2]`},
		{[]HostSlots{{Host: "h", Site: " s", Slots: 1}}, "leading or trailing space"},
		{[]HostSlots{{Host: "h", Addr: "a\tb", Slots: 1}}, "unprintable"},
		{[]HostSlots{{Host: "h", Slots: MaxRanks}, {Host: "g", Slots: 1}}, "more than 1048576 slots in all"},
	} {
		_, err := AssignRanks(c.hosts)
		require.ErrorIs(t, err, ErrInvalid, "%v", c.hosts)
		require.ErrorContains(t, err, c.errSub)
	}
}

// For random host lists, rank order is exactly RingOrder's ring, so a ring
// in rank order crosses sites S times (0 for one site) and hosts H times.
func TestAssignRanksRankOrderIsRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 200 {
		nSites := 1 + rng.IntN(4)
		var hosts []HostSlots
		for h := range 1 + rng.IntN(10) {
			hosts = append(hosts, HostSlots{
				Host: fmt.Sprintf("h%d", h), Site: fmt.Sprintf("s%d", rng.IntN(nSites)), Slots: 1 + rng.IntN(4),
			})
		}
		placements, err := AssignRanks(hosts)
		require.NoError(t, err)
		topo, err := FromPlacements(placements)
		require.NoError(t, err, "case %d", i)

		ring, err := RingOrder(topo)
		require.NoError(t, err)
		require.Equal(t, identity(topo.Size()), ring, "case %d: %v", i, hosts)

		total := 0
		for _, h := range hosts {
			total += h.Slots
			require.Len(t, topo.RanksOnHost(h.Host), h.Slots)
		}
		require.Equal(t, total, topo.Size())

		sites, err := SiteCrossings(topo, identity(topo.Size()))
		require.NoError(t, err)
		if want := len(topo.Sites()); want > 1 {
			require.Equal(t, want, sites)
		} else {
			require.Zero(t, sites)
		}
	}
}
