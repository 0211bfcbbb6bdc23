package metaroce

import (
	"slices"
	"time"
)

// firstRTOFactor is how many times the longest RTO among a connection's
// sampled paths a path without a sample of its own waits before its first
// timeout (see conn.refreshFirstRTO).
const firstRTOFactor = 2

// refreshFirstRTO sets the least RTO of each path that has no RTT sample
// of its own (path.firstRTO) from what the connection's sampled paths
// know, and brings such a path's armed retransmission timer forward to
// it. Without a sampled path the least RTO stays initialRTO: the path's
// RTT is then only the handshake's seed.
//
// The floor is firstRTOFactor times the longest base RTO (srtt + 4
// rttvar + the peer's hold, at least MinRTO) among the sampled paths, at
// least MinRTO and at most initialRTO (or MaxRTO if lower). A path far
// longer than the others may time out once spuriously under it: its
// packets move to other paths and it turns suspect (the response stands;
// the detection counts it, spurious.go), and the first answered probe,
// however late, gives it a sample of its own (handleProbe), after which
// its RTO is its own. So the floor costs such a path at most one
// episode, where 1 s stalled a connection whose other paths measured
// 15 ms (bench/results/wan_share.md, section 3).
//
// It runs on every ACK: once every path has a sample of its own (the
// steady state) it only looks at each path's flag.
func (c *conn) refreshFirstRTO() {
	if !slices.ContainsFunc(c.paths, unsampled) {
		return
	}
	known := time.Duration(0)
	for _, p := range c.paths {
		if p.rtt.has {
			known = max(known, p.baseRTO(c.cfg))
		}
	}
	hi := min(initialRTO, c.cfg.MaxRTO)
	floor := hi
	if known > 0 {
		floor = min(max(firstRTOFactor*known, c.cfg.MinRTO), hi)
	}
	for _, p := range c.paths {
		if p.rtt.has || p.firstRTO == floor {
			continue
		}
		p.firstRTO = floor
		if p.rtoAt != 0 {
			p.rtoAt = min(p.rtoAt, p.rtoFrom+p.rto(c.cfg))
		}
	}
}

// unsampled reports whether p has no RTT sample of its own.
func unsampled(p *path) bool { return !p.rtt.has }
