package tune

import "time"

// Cold hops. A rank that waits for a message longer than its transport
// spins (shared memory 200 µs, MetaRoCE 50 µs by default) sleeps, and the
// message must wake it and it must get a core again; on a machine whose
// cores its ranks share, those woken at once queue for them. Where the
// link figures give a level's cold latency (Link.LatencyCold: the probe's
// delayed ping-pongs, whose answer reaches a receiver that waited at least
// ColdWait), a hop of a cold phase costs its level's cold latency
// instead of its latency (coldAlpha).
//
// The cold phases: the hierarchical AllReduce's phases after its top
// level's (its all-gathers) where it runs as one piece (HierPieces 1:
// up to 8 MiB on the two-site lab) and the top level's phase waits at
// least ColdWait a step (its latency: a WAN's, 2.1 ms in the lab). Every
// rank of the two-site lab's grid takes part in every level (each owns a
// shard), so all of them enter the all-gathers from a wait through the
// WAN; in the lab the host (shared memory) hops there took 300-400 µs
// against the hot figures' 23 (latency and scheduling), the site hops
// 300-340 µs against 406 (bench/results/model_lab/model29.md, the 8 B
// trace). Not cold: the phases before the top level (the ranks start
// the call at once, as the model prices it), the top level's own (its
// figure is a ping-pong over that level, whose receivers wait a trip
// already: the WAN's hot and cold latencies agree), the further pieces
// of a pipelined call (their ranks are busy with the other pieces), and
// the other algorithms: the ring's and the trees' steps follow one
// another on every rank, a receiver's wait one step's latency, which the
// level's own latency figure measures on a ping-pong's receiver (the
// ring and the tree at 8 B ran 0.93-1.07 of the model in the last quiet
// window, bench/results/quiet-20261207-0942); recursive doubling's
// exchanges after a WAN exchange would qualify, and are left for a
// measurement of their own.

// ColdWait is the least wait the cold latency is measured after (the
// probe's delayed ping-pongs hold their answer at least this long) and
// so the least wait of a phase's ranks that makes its hops cold.
const ColdWait = time.Millisecond

// coldAlpha is the latency of a hop from a to b whose receiver slept:
// its latency (alpha) plus its level's cold excess (LatencyCold less
// Latency, where the level gives one and it is more).
func (m *model) coldAlpha(a, b int) float64 {
	l := m.cpuLink(a, b)
	return m.alpha(a, b) + max(0, (l.LatencyCold-l.Latency).Seconds())
}

// hopAlpha is the latency of phase p's hop from a to b: coldAlpha in a
// cold phase, else alpha.
func (m *model) hopAlpha(p phase, a, b int) float64 {
	if p.cold {
		return m.coldAlpha(a, b)
	}
	return m.alpha(a, b)
}

// chill returns ph as a cold phase: its latency path re-priced with
// coldAlpha (its rings' steps, or its exchanges' longest hop).
func (m *model) chill(ph phase) phase {
	ph.cold = true
	if len(ph.rings) == 0 {
		ph.lat = 0
		for _, f := range ph.flows {
			ph.lat = max(ph.lat, m.coldAlpha(f.src, f.dst))
		}
		return ph
	}
	ph.lat = 0
	for _, r := range ph.rings {
		hop := make([]float64, len(r.hops))
		for i, h := range r.hops {
			hop[i] = m.coldAlpha(h[0], h[1])
		}
		ph.lat = max(ph.lat, chainLatency(hop, r.steps))
	}
	return ph
}

// coldAfterTop returns the phases of the hierarchical AllReduce's one
// piece with those after the top level's chilled where the top level's
// latency is at least ColdWait (see the cold hops above). The piece's
// phases are its levels' reduce-scatters, the top level's, and the
// all-gathers (hierPhases).
func (m *model) coldAfterTop(piece []phase) []phase {
	top := len(piece) / 2
	if len(piece) < 3 || piece[top].lat < ColdWait.Seconds() {
		return piece
	}
	out := append([]phase(nil), piece...)
	for i := top + 1; i < len(out); i++ {
		out[i] = m.chill(out[i])
	}
	return out
}
