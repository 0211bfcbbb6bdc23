package tune

import "github.com/gocoll/gocoll/topology"

// problem is an AllReduce of bytes over members, at some level.
type problem struct {
	members []int
	bytes   float64
}

// Pieces of the pipelined hierarchical AllReduce (collective's
// hierpipe.go, which calls HierPieces): at most HierPiecesMax, each of at
// least HierPieceChunks chunks and, where the world is larger, of a
// quarter chunk per rank (HierPieceRanksPerChunk ranks per chunk), up to
// HierPieceChunksMax chunks.
const (
	HierPiecesMax          = 8
	HierPieceChunks        = 2
	HierPieceRanksPerChunk = 4
	HierPieceChunksMax     = 8
)

// HierExchangeChunks is the largest hierarchical AllReduce, in chunks
// (Config.ChunkBytes), whose levels of two members (the shard owners of
// two sites) run as one exchange, one latency (collective's hierpipe.go);
// a larger one runs them as a ring of two, a reduce-scatter and an
// all-gather step. An exchange reduces a chunk into the buffer its own
// send reads, so it waits for that send to complete: on a transport whose
// large sends complete when acknowledged (MetaRoCE) that holds the
// in-order pipeline a round trip per chunk, which costs more than the
// latency saved once the call is bandwidth-bound (the lab's 2x2x2 grid
// over MetaRoCE, chunks of 2 MiB, in virtual time, mrtransport's
// TestWANSimHierarchical with its control class first: 1 MiB 47.7-53.6 ->
// 55.6-60.8 % of the WAN bound with the exchange, 4 MiB 76.6-79.0 ->
// 70.9-76.1 %, 16 MiB 88.4-91.1 -> 83.7-89.6 %). In chunks, not bytes, so
// that gocoll sim's payload-free scaling (bytes and chunk divided alike)
// keeps the choice.
const HierExchangeChunks = 2

// HierExchange reports whether a hierarchical AllReduce of bytes, in
// chunks of chunkBytes, runs its levels of two members as one exchange
// (at most HierExchangeChunks chunks).
func HierExchange(bytes, chunkBytes int) bool {
	return bytes <= HierExchangeChunks*max(1, chunkBytes)
}

// HierPieces is how many pieces the hierarchical AllReduce of ranks cuts
// a buffer of bytes in, with chunks of chunkBytes. Inside a piece a level
// sends a chunk as soon as the lower level's receives of its bytes are done
// (collective/hierdeps.go), but a level's message is a piece over its
// members, so with one piece of few chunks per member the top level's
// links (the WAN) still idle while the lower levels run: in the two-site
// lab (8 ranks, MetaRoCE's 2 MiB chunks) 16 MiB was one piece of 8 chunks,
// and its WAN idled for the first and last ~80 ms of a ~900 ms call at
// 50 Mbit/s a path (bench/results/wan_share.md, before the chunk-level
// overlap). So a piece is as small as 2 chunks where the world is small;
// a larger world cuts each piece in more, smaller messages (its top ring's
// segments are a piece over the ranks), so there a piece keeps at least a
// quarter chunk per rank, and never needs more than HierPieceChunksMax
// chunks (the rule before: a piece of 8 chunks, which the 256-rank sim's
// 4 MiB call ran faster with than with 4).
func HierPieces(bytes, chunkBytes, ranks int) int {
	chunk := max(1, chunkBytes)
	perPiece := min(HierPieceChunksMax*chunk, max(HierPieceChunks*chunk, ranks*chunk/HierPieceRanksPerChunk))
	return max(1, min(HierPiecesMax, bytes/perPiece))
}

// The ramp of the hierarchical AllReduce's pieces (collective's
// hierPieceBounds): with two pieces or more, the first is cut in halves
// HierRampUp times and the last HierRampDown times (1/8 1/8 1/4 1/2 of an
// even piece at the start, 1/2 1/4 1/8 1/16 1/16 at the end), so the top
// level starts after a small piece's lower phases and the call ends a
// small piece's lower phases after it.
const (
	HierRampUp   = 3
	HierRampDown = 4
)

// hierarchical is the pipelined hierarchical AllReduce: P pieces, each
// through every level's phases (hierPhases of bytes/P), all pieces at
// once. Even pieces (no ramp) are priced as their messages' key order
// runs them (hierKeyed). Ramped pieces: the first piece takes the sum of
// its phases; each further one
// its bottleneck B, the slowest phase's load (its links' time without its
// steps' latencies, which the pieces running at once overlap: with them,
// 4 x 4 x 4 ranks over a 5 ms WAN of 8 lanes were 2.3x gocoll sim's time
// at 16 MiB) or, where the phases running at once share a link (a host's
// NIC carries its site's rings and its WAN traffic), that link's load of
// one piece of every phase: a last phase adds the P-1 further pieces.
// (Until session 21 a further piece also paid part of the rest of a
// piece, B x s x (P-1)/2P with s = 1 - B/sum, fitted to gocoll sim before
// the top ring's steps were strided and its receives took their memory by
// bytes (collective's hierpipe.go): since, the pieces overlap fully and
// the term over-predicted, 4 x 4 x 4 at 16 MiB sim/model 0.795 and 0.926
// at 64 MiB, without it 0.883 and 1.118, the lab's grid at the sim's
// defaults 0.961-0.971 -> 0.992-1.006 from 16 to 256 MiB.) With the ramp
// (P > 1 and HierRampShare met; HierRampUp, HierRampDown) the phases
// before the bottleneck phase wait only for the first ramp piece's
// (1/2^HierRampUp of a piece) and the phases after it for the last's
// (1/2^HierRampDown): those are priced at that piece's size (fill and
// drain), the bottleneck phase and the further pieces as before
// (hierRamped). One piece: its phases after the top level's are cold
// where the top level waits long (coldAfterTop, cold.go).
func (m *model) hierarchical() []phase {
	p, piece, neck, ramp := m.hierPiece()
	if p == 1 || len(piece) == 0 {
		return m.coldAfterTop(piece)
	}
	if !ramp {
		return m.hierKeyed(piece, neck, p)
	}
	rest := m.furtherPieces(piece, p)
	out := m.hierRamped(piece, neck, m.bytes/float64(p))
	bw, landed := m.loads(out[len(out)-1])
	rest.tail = landed - bw // the last piece ends as its last phase does
	return append(out, rest)
}

// furtherPieces returns the phase of the p-1 pieces after the first, each
// of piece's phases: every flow of them at once (overlapping), p-1 times
// the bytes, and p-1 times the longest phase's latency.
func (m *model) furtherPieces(piece []phase, p int) phase {
	rest := phase{overlap: true}
	for _, ph := range piece {
		rest.lat = max(rest.lat, m.time(phase{flows: ph.flows, overlap: true}))
		rest.flows = append(rest.flows, ph.flows...)
	}
	f := float64(p - 1)
	rest.lat *= f
	for i := range rest.flows {
		rest.flows[i].bytes *= f
	}
	return rest
}

// HierRampShare is how large a share of the bottleneck phase's time a
// piece (its latencies included) the hierarchical AllReduce's other
// phases (the lower levels' reduce-scatters and all-gathers, one piece
// each) must take for its pieces to be cut in a ramp (HierRamp). The ramp
// shortens the fill and the drain by 7/8 and 15/16 of those phases' time,
// and costs seven more pieces through the top level. gocoll sim
// (payload-free where large), ramped against even: where those phases
// are a tenth to a third of the bottleneck's, the ramp lost: the lab's
// 2 x 2 x 2 grid at the sim's defaults (host 4 GB/s, LAN 1.25 GB/s, WAN
// 100 MB/s; share 0.105) 4 MiB 46.3 against 44.7 ms; 4 x 8 x 8 (0.123)
// 16 MiB 268.5 against 263.2; 4 x 4 x 4 over a 5 ms WAN of 8 paths
// (0.195 at 16 MiB, 0.349 at 64 MiB) 77.9 against 56.7 and 190.8 against
// 180.2. Where they are two thirds (the lab's grid, host and LAN 300 MB/s,
// chunks of 2 MiB; 0.667) it won: 16 MiB 190.8 -> 171.8 (before the top
// ring's stride and arena: d4036a9 against d7b7e17). The lab's probed
// figures, CPU included (testdata/lab16m.topo.json): 0.84, ramped.
const HierRampShare = 0.5

// hierPiece returns the hierarchical AllReduce's even pieces (p), one
// piece's phases, the index of its bottleneck phase (the longest load)
// and whether the pieces are cut in a ramp: p > 1, the other phases
// take at least HierRampShare of the bottleneck's time a piece
// (rampShare) and each of the lower levels' is one step (oneStep).
func (m *model) hierPiece() (p int, piece []phase, neck int, ramp bool) {
	p = HierPieces(int(m.bytes), int(m.chunk), m.n)
	piece = m.hierPhases([]problem{{m.identity(), m.bytes / float64(p)}}, 0)
	neckLoad := -1.0
	for i, ph := range piece {
		if load := m.time(phase{flows: ph.flows, overlap: true}); load > neckLoad {
			neck, neckLoad = i, load
		}
	}
	return p, piece, neck, p > 1 && m.rampShare(piece, neck) && oneStep(piece, neck)
}

// oneStep reports whether piece's phases below the top level, but neck,
// take one step each (their rings are of two members). Only there does a
// small first piece start the top level early: a lower phase of one step
// sends piece q's message at key q, so the pieces' lower phases run one
// after the other, in piece order; with S steps, piece 0's last one (key
// S-1) comes after the lower-key steps of the S-1 pieces after it
// (hierShared), larger ones in a ramp. gocoll sim, ramped against even:
// 4 x 32 x 8 (site rings of 32 hosts, 31 steps) over a 5 ms WAN of 8
// paths, 64 MiB, rampShare 0.54: 255.4 against 242.7 ms (payload-free at
// scale 64, both); the lab's 2 x 2 x 2 grid with host and LAN links of
// 300 MB/s (one step a level), 16 MiB: 171.8 against 190.8.
func oneStep(piece []phase, neck int) bool {
	top := len(piece) / 2 // reduce-scatters, the top level's ring, all-gathers
	for i, ph := range piece {
		if i != neck && i != top && ph.steps > 1 {
			return false
		}
	}
	return true
}

// rampShare reports whether piece's phases other than neck take at least
// HierRampShare of neck's time.
func (m *model) rampShare(piece []phase, neck int) bool {
	if len(piece) < 2 {
		return false
	}
	var off float64
	for i, ph := range piece {
		if i != neck {
			off += m.time(ph)
		}
	}
	return off >= HierRampShare*m.time(piece[neck])
}

// HierRamp reports whether the hierarchical AllReduce of in.Bytes, in
// in.ChunkBytes chunks, on in.Topology with in.Links (those the topology
// gives win) cuts its first and last pieces in a ramp (HierRampUp,
// HierRampDown; collective's hierPieceBounds) where it has two pieces or
// more (HierPieces): where the lower levels' phases take at least
// HierRampShare of the bottleneck phase's time a piece. A pure function
// of its input, so every rank of a job answers the same. Input the model
// refuses: true (the ramp, as before it was priced).
func HierRamp(in Input) bool {
	in.Links = in.Links.With(in.Topology)
	if in.validate() != nil {
		return true
	}
	_, _, _, ramp := newModel(in).hierPiece()
	return ramp
}

// hierRamped returns one even piece's phases (piece, of bytes) with those
// before the bottleneck phase neck priced at the first ramp piece's size
// and those after it at the last's (the fill and drain of the pipeline,
// which only those small pieces' lower phases hold up).
func (m *model) hierRamped(piece []phase, neck int, bytes float64) []phase {
	first := m.hierPhases([]problem{{m.identity(), bytes / float64(int(1)<<HierRampUp)}}, 0)
	last := m.hierPhases([]problem{{m.identity(), bytes / float64(int(1)<<HierRampDown)}}, 0)
	if len(first) != len(piece) || len(last) != len(piece) {
		return piece // a level's form changed with the size: price it even
	}
	out := make([]phase, len(piece))
	for i := range piece {
		switch {
		case i < neck:
			out[i] = first[i]
		case i > neck:
			out[i] = last[i]
		default:
			out[i] = piece[i]
		}
	}
	return out
}

func (m *model) identity() []int {
	all := make([]int, m.n)
	for i := range all {
		all[i] = i
	}
	return all
}

// hierPhases mirrors collective's allReduceHierarchical for all the
// problems that run at once: a reduce-scatter phase in every group, the
// shard owners' problems one level up, an all-gather phase.
func (m *model) hierPhases(probs []problem, lvl int) []phase {
	var pre, post phase
	var next, pairs []problem
	for _, pr := range probs {
		if len(pr.members) < 2 {
			continue
		}
		if lvl == len(m.keys) {
			n := len(pr.members)
			if n == 2 && HierExchange(int(m.bytes), int(m.chunk)) { // one exchange of the whole part (hierpipe.go)
				pairs = append(pairs, pr)
				continue
			}
			m.ring(&pre, pr.members, 2*float64(n-1)/float64(n)*pr.bytes, 2*(n-1), 0.5)
			continue
		}
		groups := topology.GroupBy(pr.members, m.keys[lvl])
		p := 0
		for _, g := range groups {
			p = max(p, len(g))
		}
		if len(groups) == 1 || p == 1 {
			next = append(next, pr)
			continue
		}
		for _, g := range groups {
			share := float64(len(g)-1) / float64(len(g)) * pr.bytes
			m.ring(&pre, g, share, len(g)-1, 1)
			m.ring(&post, g, share, len(g)-1, 0)
		}
		for j := range p {
			cross := make([]int, len(groups))
			for i, g := range groups {
				cross[i] = g[j*len(g)/p]
			}
			next = append(next, problem{cross, pr.bytes / float64(p)})
		}
	}
	m.pairExchanges(&pre, pairs)
	var phases []phase
	if len(pre.flows) > 0 {
		phases = append(phases, pre)
	}
	if len(next) > 0 {
		phases = append(phases, m.hierPhases(next, lvl+1)...)
	}
	if len(post.flows) > 0 {
		phases = append(phases, post)
	}
	return phases
}

// pairExchanges adds to ph the AllReduces of two members that run as one
// exchange (collective's hierpipe.go): each sends its whole part to the
// other at once, so alone they take one latency plus the busiest link's
// load, which one step cannot hide behind each other (a ring's overlap);
// beside rings of more members, a ring of one step each.
func (m *model) pairExchanges(ph *phase, pairs []problem) {
	if len(ph.flows) > 0 {
		for _, pr := range pairs {
			m.ring(ph, pr.members, pr.bytes, 1, 1)
		}
		return
	}
	for _, pr := range pairs {
		a, b := pr.members[0], pr.members[1]
		ph.flows = append(ph.flows, flow{a, b, pr.bytes, 1}, flow{b, a, pr.bytes, 1})
		ph.lat = max(ph.lat, m.alpha(a, b), m.alpha(b, a))
		ph.steps = 1
	}
}
