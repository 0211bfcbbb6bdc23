package tune

// hierKeyed prices p even pieces of the hierarchical AllReduce (piece:
// one piece's phases, neck its bottleneck phase) as collective's pipeline
// runs them: all pieces at once, each rank sending a ring's messages to
// its neighbour in key order, where piece q's step s of a lower level has
// key q+s and of the top level q+2s (hierpipe.go).
//
//   - A lower level's link carries every piece's steps interleaved, so the
//     first piece's last step before the top (key S-1 of a phase of S
//     steps) waits for the other pieces' steps of lower keys: sum over k
//     < S of min(k+1, p) steps of a piece's S; the last piece's first step
//     after the top, likewise, for the earlier pieces' (hierShared). A
//     phase of one step is one piece's.
//   - The bottleneck phase (neck): the first piece's, its latency chain
//     included, then every further piece's flows of every phase (links
//     the phases share, as a NIC carries a site's rings and its WAN
//     traffic), their latencies hidden behind each other's loads (rest).
//     Where the neck's latency chain is longer than its load (a WAN of
//     many lanes), the further pieces' steps run inside it, keyed one
//     behind the other: rest hides that much (phase.hide), down to P-1 of
//     the neck's steps (a piece's neck load over its steps each, the last
//     piece's lag behind the first).
//
// gocoll sim (virtual time; payload-free at cmd/gocoll simHierScale, whose
// results agree with the data mode at 16 MiB), sim/model with the pieces
// pipelined one behind the other (a further piece one bottleneck: the
// rule before) -> hierKeyed: 64 ranks on one site 16 MiB 1.132 -> 0.981,
// 64 MiB 1.112 -> 0.999 (so the ring, 26.5 ms at 16 MiB, is chosen over
// the hierarchical, 28.7); 4 x 4 x 4 over a 5 ms WAN of 8 paths 16 MiB
// 0.835 -> 1.048, 64 MiB 0.955 -> 1.012.
func (m *model) hierKeyed(piece []phase, neck, p int) []phase {
	out := hierShared(piece, neck, p)
	rest := m.furtherPieces(piece, p)
	f := float64(p - 1)
	top := piece[neck]
	load, _ := m.loads(phase{flows: top.flows})
	lag := f * load / float64(max(1, top.steps))
	chain := m.linkTime(top) - load // the top's latency beyond its load
	rest.hide = max(0, min(chain, m.time(rest)-lag))
	bw, landed := m.loads(out[len(out)-1])
	rest.tail = landed - bw // the last piece ends as its last phase does
	return append(out, rest)
}

// hierShared returns one even piece's phases with those other than neck
// priced beside the other pieces' (p in all) steps of lower keys: a
// phase of S steps carries sum over k < S of min(k+1, p) steps of a
// piece's S.
func hierShared(piece []phase, neck, p int) []phase {
	out := make([]phase, len(piece))
	for i, ph := range piece {
		out[i] = ph
		if i == neck || ph.steps < 2 {
			continue
		}
		var n int
		for k := range ph.steps {
			n += min(k+1, p)
		}
		out[i].flows = appendScaled(nil, ph.flows, float64(n)/float64(ph.steps))
	}
	return out
}

// appendScaled appends flows to dst with their bytes times f.
func appendScaled(dst, flows []flow, f float64) []flow {
	for _, fl := range flows {
		fl.bytes *= f
		dst = append(dst, fl)
	}
	return dst
}
