package tune

// hierKeyed prices p even pieces of the hierarchical AllReduce (piece:
// one piece's phases, neck its bottleneck phase) as collective's pipeline
// runs them: all pieces at once, each rank sending a ring's messages to
// its neighbour in key order, where piece q's step s of a lower level has
// key q+s and of the top level q+2s (hierpipe.go). So the links of a
// lower level carry every piece's steps interleaved, and the top level's
// queue, which holds piece q+1's first step before piece q's second,
// waits at piece q+1's first step until piece q+1's lower phases are
// done: the top level runs at its links' rate only once every piece's
// lower phases have run. gocoll sim's link traces: 64 ranks on one site,
// 64 MiB in 8 pieces: the NICs idle 11.9 ms at the start while the hosts'
// links carry all 8 pieces' reduce-scatters (14.7 ms); 4 x 4 x 4 over a
// 5 ms WAN, 64 MiB: the uplinks idle 35.5 ms while the NICs carry the
// sites' reduce-scatters (40.3 ms). Three phases:
//
//   - fill: the phases before neck, of every piece, each link carrying
//     all of theirs; at least one piece's phases in turn (latencies);
//   - top: neck's flows of every piece; at least one piece's neck (its
//     latency chain) plus the lag of the last piece's top ring behind the
//     first's, P-1 of its steps (a piece's neck load over its steps each);
//   - drain: the phases after neck. The first pieces' all-gathers run
//     during that lag (lag over one piece's all-gather load of them, on
//     their own links or beside the top's: priced in the top phase); the
//     rest, at least the last piece's phases in turn, after it.
//
// gocoll sim (virtual time, payload-free, its default links, 512 KiB
// chunks), sim/model with the pieces pipelined through the levels one
// behind the other (a further piece one bottleneck: the rule before) ->
// hierKeyed: 64 ranks on one site 16 MiB 1.150 -> 0.986, 64 MiB 1.172 ->
// 0.974 (so the ring, 26.5 ms at 16 MiB, is chosen over the hierarchical,
// 29.2 ms, predicted 25.4 before); 4 x 4 x 4 over a 5 ms WAN of 8 paths
// 16 MiB 0.883 -> 1.047, 64 MiB 1.118 -> 0.958; 4 x 8 x 8 16 MiB 1.014 ->
// 0.985, 256 MiB 1.020 -> 0.983; the lab's 2 x 2 x 2 grid 16-256 MiB
// 0.992-1.006 -> 0.961-0.973. Without the lag, 4 x 4 x 4 at 64 MiB was
// 0.873. Ramped pieces (HierRamp) keep the pipelined pricing.
func (m *model) hierKeyed(piece []phase, neck, p int) []phase {
	P := float64(p)
	var fill, drain phase
	fill.overlap, drain.overlap = true, true
	for i, ph := range piece {
		switch {
		case i < neck:
			fill.lat += m.time(ph)
			fill.steps += ph.steps
			fill.flows = appendScaled(fill.flows, ph.flows, P)
		case i > neck:
			drain.lat += m.time(ph)
			drain.steps += ph.steps
		}
	}
	top := piece[neck]
	neckLoad, _ := m.loads(phase{flows: top.flows})
	lag := P - 1
	if top.steps > 0 {
		lag *= neckLoad / float64(top.steps)
	} else {
		lag *= neckLoad
	}
	t := phase{overlap: true, steps: top.steps, lat: m.time(top) + lag, flows: appendScaled(nil, top.flows, P)}
	// The post phases' pieces that the lag covers: lag over one piece's
	// post load on its busiest link, at most all but the last piece.
	var post []flow
	for _, ph := range piece[neck+1:] {
		post = append(post, ph.flows...)
	}
	during := 0.0
	if len(post) > 0 {
		if postLoad, _ := m.loads(phase{flows: post}); postLoad > 0 {
			during = min(P-1, lag/postLoad)
		}
	}
	t.flows = appendScaled(t.flows, post, during)
	drain.flows = appendScaled(nil, post, P-during)
	var out []phase
	if len(fill.flows) > 0 {
		out = append(out, fill)
	}
	out = append(out, t)
	if len(drain.flows) > 0 {
		bw, landed := m.loads(piece[len(piece)-1])
		drain.tail = landed - bw // the last piece ends as its last phase does
		out = append(out, drain)
	} else {
		bw, landed := m.loads(top)
		t.tail = landed - bw
		out[len(out)-1] = t
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
