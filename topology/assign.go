package topology

import "fmt"

// HostSlots is one line of a host list: a host, its site, the address peers
// use to reach it, and how many ranks to start there (like "node slots=N" in
// an Open MPI hostfile).
type HostSlots struct {
	Host  string // required
	Site  string // empty means DefaultSite
	Addr  string // optional, copied to each Placement
	Slots int    // ranks on this host, at least 1
}

// Placement is where one rank starts.
type Placement struct {
	Rank      int
	Host      string
	Site      string // never empty
	Addr      string
	LocalRank int // index among the ranks of Host
}

// RankInfo returns the rank entry for p, without NICs or CPU information.
func (p Placement) RankInfo() RankInfo {
	return RankInfo{Rank: p.Rank, Host: p.Host, Site: p.Site, LocalRank: p.LocalRank, Addr: p.Addr}
}

// AssignRanks numbers the slots of hosts and returns one Placement per rank,
// in rank order. Ranks are numbered site by site, sites in order of first
// appearance in hosts; within a site, host by host in the order listed; and
// the slots of one host get consecutive ranks and local ranks 0..Slots-1
// (mpirun's by-slot mapping, grouped by site). So the ring 0, 1, ..., n-1
// is the ring [RingOrder] builds, which leaves each site and each host once.
//
// It returns an error wrapping ErrInvalid if hosts is empty, a host is
// listed twice or with an empty or malformed name, a site or address is
// malformed, a host has fewer than one slot, or the slots add up to more than
// MaxRanks.
func AssignRanks(hosts []HostSlots) ([]Placement, error) {
	if len(hosts) == 0 {
		return nil, invalidf("no hosts")
	}
	var sites []string
	hostsOfSite := make(map[string][]HostSlots)
	firstIndex := make(map[string]int) // host -> index in hosts
	total := 0
	for i, h := range hosts {
		if err := checkHostSlots(h); err != nil {
			return nil, fmt.Errorf("%w: hosts[%d]: %v", ErrInvalid, i, err)
		}
		if j, dup := firstIndex[h.Host]; dup {
			return nil, invalidf("host %q is listed twice, at hosts[%d] and hosts[%d]", h.Host, j, i)
		}
		firstIndex[h.Host] = i
		if total += h.Slots; total > MaxRanks {
			return nil, invalidf("hosts[0..%d] have more than %d slots in all", i, MaxRanks)
		}
		site := siteKey(h.Site)
		if _, seen := hostsOfSite[site]; !seen {
			sites = append(sites, site)
		}
		hostsOfSite[site] = append(hostsOfSite[site], h)
	}
	placements := make([]Placement, 0, total)
	for _, site := range sites {
		for _, h := range hostsOfSite[site] {
			for local := range h.Slots {
				placements = append(placements, Placement{
					Rank: len(placements), Host: h.Host, Site: site, Addr: h.Addr, LocalRank: local,
				})
			}
		}
	}
	return placements, nil
}

func checkHostSlots(h HostSlots) error {
	if h.Host == "" {
		return fmt.Errorf("empty host")
	}
	for _, f := range []struct{ field, v string }{{"host", h.Host}, {"site", h.Site}, {"addr", h.Addr}} {
		if err := checkName(f.field, f.v); err != nil {
			return err
		}
	}
	if h.Slots < 1 || h.Slots > MaxRanks {
		return fmt.Errorf("host %q has %d slots, want 1 to %d", h.Host, h.Slots, MaxRanks)
	}
	return nil
}

// FromPlacements returns the topology of placements, as [New] would from
// their RankInfos.
func FromPlacements(placements []Placement) (Topology, error) {
	ranks := make([]RankInfo, len(placements))
	for i, p := range placements {
		ranks[i] = p.RankInfo()
	}
	return New(ranks)
}
