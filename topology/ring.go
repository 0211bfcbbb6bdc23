package topology

import "fmt"

// RingOrder returns a ring over all ranks of t, as the sequence of ranks in
// ring order (the last rank sends to the first). The ranks are grouped site
// by site in the order of [Topology.Sites], then host by host in the order of
// [Topology.HostsOnSite], then by increasing rank.
//
// So the ring enters and leaves every site exactly once, and likewise every
// host. A ring over ranks on S > 1 sites must leave each site at least once,
// so this ring's S site crossings (see [SiteCrossings]) are the fewest
// possible; with a single site it has none. The same holds for hosts. In a
// ring allreduce every link carries the same traffic, so this puts S links,
// rather than up to n, on the slow paths between sites.
//
// RingOrder returns an error wrapping ErrInvalid if t is not valid.
func RingOrder(t Topology) ([]int, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	l := buildLayout(t)
	ring := make([]int, 0, t.Size())
	for _, site := range l.sites {
		for _, host := range l.hostsOfSite[site] {
			ring = append(ring, l.ranksOfHost[host]...)
		}
	}
	return ring, nil
}

// SiteCrossings returns how many of the links of ring join ranks on
// different sites of t. The ring is cyclic: its last rank links to its first.
// The ring may cover a subset of t's ranks, but each at most once; a ring of
// fewer than two ranks has no links.
//
// It returns an error wrapping ErrInvalid if t is not valid or ring names a
// rank twice or a rank t does not have.
func SiteCrossings(t Topology, ring []int) (int, error) {
	return crossings(t, ring, func(ri RankInfo) string { return ri.Site })
}

// HostCrossings is like [SiteCrossings] but counts links between ranks on
// different hosts.
func HostCrossings(t Topology, ring []int) (int, error) {
	return crossings(t, ring, func(ri RankInfo) string { return ri.Host })
}

func crossings(t Topology, ring []int, group func(RankInfo) string) (int, error) {
	t, err := New(t.Ranks)
	if err != nil {
		return 0, err
	}
	seen := make([]bool, t.Size())
	for i, r := range ring {
		if r < 0 || r >= t.Size() {
			return 0, fmt.Errorf("%w: ring[%d]: rank %d out of range [0, %d)", ErrInvalid, i, r, t.Size())
		}
		if seen[r] {
			return 0, fmt.Errorf("%w: ring[%d]: rank %d appears twice", ErrInvalid, i, r)
		}
		seen[r] = true
	}
	if len(ring) < 2 {
		return 0, nil
	}
	count := 0
	for i, r := range ring {
		next := ring[(i+1)%len(ring)]
		// New sorted t.Ranks, so entry r is rank r.
		if group(t.Ranks[r]) != group(t.Ranks[next]) {
			count++
		}
	}
	return count, nil
}
