package collective

import (
	"fmt"

	"github.com/gocoll/gocoll/topology"
)

// Topology returns where each rank of the communicator runs (host, site,
// local rank, ...), numbered by communicator rank, with the link figures
// it chooses algorithms with (Links, nil where it has none), and true; or
// false if the communicator was created without Config.Topology. A
// communicator made by Split gets its members' part of its parent's
// topology, local ranks renumbered among the members on each host, and
// its link figures. The result is a copy the caller may change.
func (c *Comm) Topology() (topology.Topology, bool) {
	if c.topo == nil {
		return topology.Topology{}, false
	}
	t, err := topology.New(c.topo.Ranks)
	if err != nil {
		return topology.Topology{}, false // validated when set; unreachable
	}
	t.Links = c.topo.Links.Clone()
	return t, true
}

// Site returns this rank's site, or "" if the communicator has no topology.
func (c *Comm) Site() string {
	if c.topo == nil {
		return ""
	}
	ri, _ := c.topo.Rank(c.rank)
	return ri.SiteName()
}

// worldTopology validates cfg.Topology for a world of n ranks.
func worldTopology(t *topology.Topology, n int) (*topology.Topology, error) {
	if t == nil {
		return nil, nil
	}
	if t.Size() != n {
		return nil, fmt.Errorf("collective: Config.Topology has %d ranks, the world %d", t.Size(), n)
	}
	v, err := topology.New(t.Ranks)
	if err != nil {
		return nil, fmt.Errorf("collective: Config.Topology: %w", err)
	}
	v.Links = t.Links // link figures (a version 2 topology file's), for the cost model's choice
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("collective: Config.Topology: %w", err)
	}
	return &v, nil
}

// subTopology is parent's placement of the given parent ranks, renumbered
// 0..len(members)-1 in member order, local ranks renumbered per host, with
// parent's link figures: every level's, and the pairs of hosts that still
// have members (so the cost model's choice on a split communicator uses
// the same figures as on its parent).
func subTopology(parent *topology.Topology, members []int) *topology.Topology {
	if parent == nil {
		return nil
	}
	ranks := make([]topology.RankInfo, len(members))
	local := map[string]int{}
	for i, m := range members {
		ri, _ := parent.Rank(m)
		ri.Rank = i
		ri.LocalRank = local[ri.Host]
		local[ri.Host]++
		ranks[i] = ri
	}
	t, err := topology.New(ranks)
	if err != nil {
		return nil // cannot happen for a subset of a valid topology
	}
	if pl := parent.Links; pl != nil {
		ls := &topology.Links{Host: pl.Host, Site: pl.Site, WAN: pl.WAN}
		for _, p := range pl.Pairs {
			if local[p.A] > 0 && local[p.B] > 0 {
				ls.Pairs = append(ls.Pairs, p)
			}
		}
		t.Links = ls
	}
	return &t
}
