package tune

// The transport's opening round trip. gocoll's transports between hosts
// (MetaRoCE, TCP) pace a connection by its windows and round trip: a
// connection that starts a transfer (a new call, or a tree's edge whose
// first chunk has only now come) does not move at the links' rate at
// once where its windows are still sized for links it shared with other
// connections (a lone connection after an idle spell opens at about the
// links' rate: metaroce's TestIdleRestartAlone), and a transfer that
// lasts beyond its first round trip ends later than on an ideal fabric
// that opens every transfer at full rate (transport/simnet, gocoll sim):
// by what it would move beyond that round trip, up to one more round
// trip (open). The figures below are what the term was fitted against. A
// transfer of no more than its path's bandwidth-delay product (rate × 2 ×
// latency) costs nothing more. The model prices it for every algorithm
// alike: the first phase in which a connection between two hosts moves a
// flow takes the longest of its connections' openings (they open at
// once), and a tree, whose edges open one after another as the first
// chunk climbs and comes back down, the openings of the edges on its
// longest path (tree). Shared memory (ranks of a host) has no window.
// Input.IdealTransport leaves the term out.
//
// In virtual time over MetaRoCE (mrtransport's TestWANSimHierarchical,
// the two-site lab's fabric: 4 links of 25 MB/s, 2 ms one way, 3-4
// seeds of 6-8 calls), against the ideal fabric (gocoll sim) of the same
// figures, the 4 MiB tree took ~106 ms (101-148, first calls included)
// against 85.9 (the model, ideal: 92.0; its longest path opens 4 WAN
// edges: 108.0), ~103 (98-115) against 84.9 at 1 ms one way (88.0; 96.0)
// and ~130 (119-191) against 87.9 at 4 ms (100.0; 132.0); at 1 MiB ~35.5
// against 23.0 (29.0; 34.0), at 16 MiB ~395 against 337.6 (343.6;
// 359.7). The ring (one WAN connection each way, open at once), where its
// paths spread over the links, 78.6 against 75.4 (75.4; 79.4) and 301-306
// at 16 MiB (295.6; 299.6); the hierarchical 48-58 at 4 MiB from its third
// call on (44.1; 48.1) and ~188 at 16 MiB (167.9; 171.9). At 1 MiB the
// ring (28-41 ms against 20.4) and the hierarchical (16.5-20.6 against
// 12.6) lose more than an opening: each step's message meets a connection
// idle since the step before (bench/results/tree_lab.md).

// open returns the seconds a flow of bytes from a to b loses to its
// connection's opening (see above): between hosts, its time at its rate
// beyond one round trip, at most one more round trip.
func (m *model) open(a, b int, bytes float64) float64 {
	if m.ideal || m.host[a] == m.host[b] {
		return 0
	}
	rtt := 2 * m.alpha(a, b)
	return min(rtt, max(0, bytes/m.rate(a, b)-rtt))
}

// opening returns the seconds phase p's connections take to open (see
// above): the longest opening of a flow of p on a connection not opened
// by an earlier phase (open, which it updates). A tree's phase (serial)
// prices its own openings (tree) and only marks its connections open.
func (m *model) opening(p phase, open map[[2]int]bool) float64 {
	var t float64
	for _, f := range p.flows {
		c := [2]int{f.src, f.dst}
		if open[c] {
			continue
		}
		open[c] = true
		if !p.serial {
			t = max(t, m.open(f.src, f.dst, f.bytes))
		}
	}
	if p.serial {
		return p.opening
	}
	return t
}
