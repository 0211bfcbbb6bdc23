package topology

import (
	"cmp"
	"slices"
)

// DefaultSite is the site of a rank whose Site is empty.
const DefaultSite = "default"

// Topology is the placement of every rank of a job. The zero Topology has no
// ranks and is not valid.
//
// The order of Ranks carries no meaning: every method looks ranks up by
// number, and sites and hosts are ordered by first appearance in increasing
// rank order. [New] returns a topology whose Ranks are sorted by rank with
// every Site filled in; the methods also accept a Topology built by hand, and
// treat an empty Site as [DefaultSite]. They do not validate: on a topology
// that fails [Topology.Validate] their results describe the entries as given.
type Topology struct {
	Ranks []RankInfo `json:"ranks"`
	// Links, if set, gives link figures (a version 2 topology file's
	// "levels" and "links"); nil: none known. [New] leaves it nil.
	Links *Links `json:"-"`
}

// RankInfo is where one rank runs.
type RankInfo struct {
	Rank      int     `json:"rank"`           // in [0, n) for a topology of n ranks
	Host      string  `json:"host"`           // required; a host belongs to one site
	Site      string  `json:"site,omitempty"` // empty means DefaultSite
	LocalRank int     `json:"local_rank"`     // index among the ranks of Host, in [0, ranks on Host)
	Addr      string  `json:"addr,omitempty"` // optional address peers use to reach this rank; opaque here
	NICs      []NIC   `json:"nics,omitempty"`
	CPU       CPUInfo `json:"cpu,omitzero"`
}

// NIC is one network interface of a rank's host.
type NIC struct {
	Name     string   `json:"name"`
	MTU      int      `json:"mtu,omitempty"`   // bytes; 0 if unknown
	Addrs    []string `json:"addrs,omitempty"` // CIDR prefixes, e.g. "10.0.0.5/24", "fe80::1/64"
	Up       bool     `json:"up,omitempty"`
	Running  bool     `json:"running,omitempty"`
	Loopback bool     `json:"loopback,omitempty"`
}

// SiteName returns r.Site, or DefaultSite if it is empty.
func (r RankInfo) SiteName() string {
	if r.Site == "" {
		return DefaultSite
	}
	return r.Site
}

// Size returns the number of ranks, len(t.Ranks).
func (t Topology) Size() int { return len(t.Ranks) }

// Rank returns the entry of rank r and true, or false if t has none.
// If t lists r more than once (no valid topology does), Rank returns one
// of them: the first, unless t.Ranks[r] is one. O(1) where t.Ranks[r] is
// rank r (a topology New returns, whose ranks are 0 to n-1 in order).
func (t Topology) Rank(r int) (RankInfo, bool) {
	if r >= 0 && r < len(t.Ranks) && t.Ranks[r].Rank == r { // sorted, as New leaves them: O(1)
		return t.Ranks[r], true
	}
	for _, ri := range t.Ranks {
		if ri.Rank == r {
			return ri, true
		}
	}
	return RankInfo{}, false
}

// Sites returns the distinct sites in order of first appearance by
// increasing rank: the site of rank 0 comes first.
func (t Topology) Sites() []string { return buildLayout(t).sites }

// Hosts returns the distinct hosts in order of first appearance by
// increasing rank, across all sites.
func (t Topology) Hosts() []string { return buildLayout(t).hosts }

// HostsOnSite returns the hosts of site in order of first appearance by
// increasing rank. An empty site means DefaultSite.
func (t Topology) HostsOnSite(site string) []string {
	return slices.Clone(buildLayout(t).hostsOfSite[siteKey(site)])
}

// RanksOnSite returns the ranks of site in increasing order. An empty site
// means DefaultSite.
func (t Topology) RanksOnSite(site string) []int {
	site = siteKey(site)
	var ranks []int
	for _, ri := range sortedByRank(t) {
		if ri.SiteName() == site {
			ranks = append(ranks, ri.Rank)
		}
	}
	return ranks
}

// RanksOnHost returns the ranks of host in increasing order.
func (t Topology) RanksOnHost(host string) []int {
	return slices.Clone(buildLayout(t).ranksOfHost[host])
}

// LocalSize returns the number of ranks on the host of rank r, or 0 if t has
// no rank r.
func (t Topology) LocalSize(r int) int {
	ri, ok := t.Rank(r)
	if !ok {
		return 0
	}
	return len(buildLayout(t).ranksOfHost[ri.Host])
}

// SiteLeaders returns the lowest rank of each site, in the order of Sites.
// These are the only ranks [HierarchicalTree] connects across sites.
func (t Topology) SiteLeaders() []int {
	l := buildLayout(t)
	leaders := make([]int, len(l.sites))
	for i, site := range l.sites {
		leaders[i] = l.ranksOfHost[l.hostsOfSite[site][0]][0]
	}
	return leaders
}

func siteKey(site string) string {
	if site == "" {
		return DefaultSite
	}
	return site
}

// layout is t grouped site by site, host by host, rank by rank, each level in
// order of first appearance by increasing rank.
type layout struct {
	sites       []string
	hosts       []string
	hostsOfSite map[string][]string
	ranksOfHost map[string][]int // increasing
}

func buildLayout(t Topology) layout {
	l := layout{
		hostsOfSite: make(map[string][]string),
		ranksOfHost: make(map[string][]int),
	}
	for _, ri := range sortedByRank(t) {
		site := ri.SiteName()
		if _, seen := l.hostsOfSite[site]; !seen {
			l.sites = append(l.sites, site)
			l.hostsOfSite[site] = nil
		}
		if _, seen := l.ranksOfHost[ri.Host]; !seen {
			l.hosts = append(l.hosts, ri.Host)
			l.hostsOfSite[site] = append(l.hostsOfSite[site], ri.Host)
		}
		l.ranksOfHost[ri.Host] = append(l.ranksOfHost[ri.Host], ri.Rank)
	}
	return l
}

// sortedByRank returns a copy of t.Ranks sorted by rank, keeping the input
// order among equal ranks.
func sortedByRank(t Topology) []RankInfo {
	ranks := slices.Clone(t.Ranks)
	slices.SortStableFunc(ranks, func(a, b RankInfo) int { return cmp.Compare(a.Rank, b.Rank) })
	return ranks
}
