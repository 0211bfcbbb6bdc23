package tune

import (
	"math"
	"slices"

	"github.com/gocoll/gocoll/topology"
)

type level int

const (
	levelHost level = iota
	levelSite
	levelWAN
)

// model holds one Input digested: ranks' hosts and sites as indices.
type model struct {
	n          int
	host, site []int
	keys       [2][]int // hierarchical levels, innermost first: host, site
	links      [3]Link
	bytes      float64
	chunk      float64
	order      []int // the topology's ring order (the trees'; the ring AllReduce runs in rank order)
	root       int
	pairs      map[[2]int]int // (host, host) either way -> index in pairLinks
	pairLinks  []Link
	cpu        cpuModel // the ranks' machines and cores (cpu.go)
	scratch    loadScratch
}

func newModel(in Input) *model {
	n := in.Topology.Size()
	m := &model{n: n, host: make([]int, n), site: make([]int, n), bytes: float64(in.Bytes),
		chunk: float64(in.ChunkBytes), root: in.Root, links: [3]Link{in.Links.Host, in.Links.Site, in.Links.WAN}}
	hosts, sites := map[string]int{}, map[string]int{}
	index := func(ids map[string]int, name string) int {
		if i, ok := ids[name]; ok {
			return i
		}
		ids[name] = len(ids)
		return ids[name]
	}
	for r := range n {
		ri, _ := in.Topology.Rank(r)
		m.host[r], m.site[r] = index(hosts, ri.Host), index(sites, ri.SiteName())
	}
	m.keys = [2][]int{m.host, m.site}
	for i, p := range in.Links.Pairs { // validated: both hosts are in the topology
		if m.pairs == nil {
			m.pairs = map[[2]int]int{}
		}
		a, b := hosts[p.A], hosts[p.B]
		m.pairs[[2]int{a, b}], m.pairs[[2]int{b, a}] = i, i
		m.pairLinks = append(m.pairLinks, p.Link)
	}
	m.order, _ = topology.RingOrder(in.Topology) // validated
	m.cpu = newCPUModel(in.Topology, m.links)
	m.scratch = newLoadScratch(n, len(hosts), len(sites), len(m.pairLinks))
	return m
}

func (m *model) level(a, b int) level {
	switch {
	case m.host[a] == m.host[b]:
		return levelHost
	case m.site[a] == m.site[b]:
		return levelSite
	}
	return levelWAN
}

// pair is the index of the pair link between a's and b's hosts, or -1.
func (m *model) pair(a, b int) int {
	if i, ok := m.pairs[[2]int{m.host[a], m.host[b]}]; ok && m.host[a] != m.host[b] {
		return i
	}
	return -1
}

func (m *model) alpha(a, b int) float64 {
	if i := m.pair(a, b); i >= 0 {
		return m.pairLinks[i].Latency.Seconds()
	}
	return m.links[m.level(a, b)].Latency.Seconds()
}

// resource is one shared link a transfer crosses: kind 0/1 a rank's port
// out/in, 2/3 a host's NIC out/in, 4/5 a site's uplink out/in, 6/7 a pair
// link in its two directions, 8 the connection between two ranks of
// different hosts (one lane at its level's, or pair's, bandwidth: a
// level's lanes serve several connections, not one faster); idx the rank,
// host, site, pair or src×n+dst.
type resource struct{ kind, idx int }

// path calls visit with each resource a transfer from src to dst crosses
// and that resource's figures. simnet places its transfers on the same.
func (m *model) path(src, dst int, visit func(resource, Link)) {
	switch m.level(src, dst) {
	case levelHost:
		visit(resource{0, src}, m.links[levelHost])
		visit(resource{1, dst}, m.links[levelHost])
		return
	case levelWAN:
		visit(resource{4, m.site[src]}, m.links[levelWAN])
		visit(resource{5, m.site[dst]}, m.links[levelWAN])
	}
	visit(resource{2, m.host[src]}, m.links[levelSite])
	visit(resource{3, m.host[dst]}, m.links[levelSite])
	conn := m.links[m.level(src, dst)]
	if i := m.pair(src, dst); i >= 0 {
		kind := 6
		if m.host[src] > m.host[dst] {
			kind = 7
		}
		visit(resource{kind, i}, m.pairLinks[i])
		conn = m.pairLinks[i]
	}
	conn.Lanes = 1 // one transfer at a time between two ranks
	visit(resource{8, src*m.n + dst}, conn)
}

type flow struct {
	src, dst int
	bytes    float64
}

// phase is transfers that run at once: steps dependent steps whose
// latencies sum to lat. A pipelined phase moves its flows in chunks
// chunks, the first of which takes fill seconds along the longest path:
// it takes lat + fill + (chunks-1)/chunks of the busiest link's load. In
// an overlapped phase (rings, whose messages are posted ahead) the
// latencies hide behind the busiest link: max(lat, load). Else, lat +
// load.
type phase struct {
	flows   []flow
	steps   int
	lat     float64
	fill    float64
	chunks  int
	overlap bool
	serial  bool      // one chunk in flight per flow (trees)
	rings   []ringRun // the rings of an overlapped phase, whose chunks' transfers lie on its latency path
}

// ringRun is one ring of a phase: its hops, in ring order, the dependent
// steps it runs and the chunk each step's message moves at a time. A
// ring's step forwards what the step before it produced, chunk by chunk
// (collective's ring: index i is sent after index i-k arrived), so the
// critical path crosses steps hops, each one latency and one chunk's
// transfer at that hop's share of its links.
type ringRun struct {
	hops  [][2]int
	steps int
	chunk float64
}

// time is the phase's predicted seconds (see the package comment): its
// links' time and its steps' scheduling cost, or what its CPU work allows
// on the machines' cores, the longer (cpu.go).
func (m *model) time(p phase) float64 {
	bound, sched := m.cpuTime(p)
	return max(m.linkTime(p)+sched, bound)
}

// linkTime is the phase's seconds on its links alone.
func (m *model) linkTime(p phase) float64 {
	sc := &m.scratch
	for _, f := range p.flows {
		m.path(f.src, f.dst, func(r resource, l Link) {
			ld := sc.load(r, l)
			ld.busy += f.bytes / l.Bandwidth
			ld.flows++
		})
	}
	bw := sc.busiest()
	links := bw // the busiest link's load alone
	if p.serial {
		// A tree's edge moves one chunk at a time (its next send waits
		// for the last to land): each chunk takes the edge's latency on
		// top of its bytes, which several lanes do not hide; the flows
		// of several trees between the same two ranks take turns.
		edges := sc.edges
		clear(edges)
		for _, f := range p.flows {
			e := [2]int{f.src, f.dst}
			edges[e] += f.bytes/m.rate(f.src, f.dst) + float64(p.chunks)*m.alpha(f.src, f.dst)
			bw = max(bw, edges[e])
		}
	}
	lat := p.lat
	for _, r := range p.rings {
		hop := make([]float64, len(r.hops))
		for i, h := range r.hops {
			hop[i] = m.alpha(h[0], h[1]) + r.chunk/m.rate(h[0], h[1])
		}
		lat = max(lat, chainLatency(hop, r.steps))
	}
	switch {
	case p.overlap:
		return max(lat, bw)
	case p.chunks > 0: // at least the busiest link's load, where flows share it
		return p.lat + max(p.fill+bw*float64(p.chunks-1)/float64(p.chunks), links)
	}
	return p.lat + bw
}

// rate is the bandwidth of one transfer from a to b: its slowest link's.
func (m *model) rate(a, b int) float64 {
	r := math.Inf(1)
	m.path(a, b, func(_ resource, l Link) { r = min(r, l.Bandwidth) })
	return r
}

// partnerLatency is what an operation's end costs beyond its phases,
// which take t seconds: every rank checks the operation header of its
// neighbours in the binomial spanning tree of the communicator
// (collective's touchPartners: rank r's parent is r with its lowest set
// bit cleared), so where the algorithm never exchanged messages with one,
// the header takes one more latency of that link after the end; a
// partner on another site, whose header leaves at the operation's first
// wait (touchFarPartners), only what of its latency the phases do not
// cover.
func (m *model) partnerLatency(phases []phase, t float64) float64 {
	// talked[r]: some flow ran between r and its parent r&(r-1).
	talked := m.scratch.talked
	if len(talked) != m.n {
		talked = make([]bool, m.n)
		m.scratch.talked = talked
	}
	clear(talked)
	for _, p := range phases {
		for _, f := range p.flows {
			lo, hi := min(f.src, f.dst), max(f.src, f.dst)
			if hi > 0 && lo == hi&(hi-1) {
				talked[hi] = true
			}
		}
	}
	var lat float64
	for r := 1; r < m.n; r++ {
		parent := r & (r - 1)
		if talked[r] {
			continue
		}
		a := m.alpha(parent, r)
		if m.site[parent] != m.site[r] {
			a = max(0, a-t)
		}
		lat = max(lat, a)
	}
	return lat
}

// chunks cuts b bytes into pipeline chunks: their number and size.
func (m *model) chunks(b float64) (int, float64) {
	k := max(1, int(math.Ceil(b/m.chunk)))
	return k, b / float64(k)
}

// ring adds to ph a ring over members, each sending perFlow bytes to the
// next in steps dependent steps.
func (m *model) ring(ph *phase, members []int, perFlow float64, steps int) {
	n := len(members)
	if n < 2 {
		return
	}
	// A step's message waits for the one before it from the left
	// neighbour, so the latency path is steps hops around the ring: whole
	// laps, and the slowest run of the remaining hops.
	hop := make([]float64, n)
	run := ringRun{steps: steps}
	_, run.chunk = m.chunks(perFlow / float64(steps))
	for i, src := range members {
		dst := members[(i+1)%n]
		ph.flows = append(ph.flows, flow{src, dst, perFlow})
		hop[i] = m.alpha(src, dst)
		run.hops = append(run.hops, [2]int{src, dst})
	}
	ph.steps = max(ph.steps, steps)
	ph.lat = max(ph.lat, chainLatency(hop, steps))
	ph.overlap = true
	ph.rings = append(ph.rings, run)
}

// chainLatency is the longest path of steps consecutive hops around a
// ring whose hop i costs hop[i]: whole laps, and the slowest run of the
// remaining hops.
func chainLatency(hop []float64, steps int) float64 {
	n := len(hop)
	var lap float64
	for _, h := range hop {
		lap += h
	}
	rest, run := steps%n, 0.0
	for i := range rest {
		run += hop[i]
	}
	worst := run
	for i := range n {
		run += hop[(i+rest)%n] - hop[i]
		worst = max(worst, run)
	}
	return float64(steps/n)*lap + worst
}

// ringAllReduce is collective's ring AllReduce on the rings of strides
// (RingStrides), each carrying its part of the buffer at once. A ring runs
// in rank order (rank r sends to r+s), not the topology's ring order: on a
// cyclic placement every step crosses hosts.
func (m *model) ringAllReduce(strides []int) []phase {
	var ph phase
	n := m.n
	if len(strides) == 0 {
		strides = []int{1}
	}
	for _, s := range strides {
		members := make([]int, n)
		for i := range members {
			members[i] = i * s % n
		}
		m.ring(&ph, members, 2*float64(n-1)/float64(n)*m.bytes/float64(len(strides)), 2*(n-1))
	}
	if len(strides) > 1 {
		ph.lat = m.lockstepLatency(strides, 2*(n-1))
	}
	return []phase{ph}
}

// lockstepLatency is the latency path of rings of strides driven in
// lockstep, as collective's allReduceChannels drives them (one goroutine
// takes step i of every channel before step i+1 of any): a rank's step i
// waits for its step i-1 on every channel, so the path may follow any
// channel's hop at each step, and where two channels' hops cross a slow
// link both ways (strides s and n-s at a site's edge) it crosses at every
// step. The longest such path of steps hops, by dynamic programming.
func (m *model) lockstepLatency(strides []int, steps int) float64 {
	n := m.n
	cur, next := make([]float64, n), make([]float64, n)
	hops := make([][]float64, len(strides)) // hops[c][r]: from r-s_c to r
	for c, s := range strides {
		hops[c] = make([]float64, n)
		for r := range n {
			hops[c][r] = m.alpha((r-s+n)%n, r)
		}
	}
	for range steps {
		for r := range n {
			best := 0.0
			for c, s := range strides {
				best = max(best, cur[(r-s+n)%n]+hops[c][r])
			}
			next[r] = best
		}
		cur, next = next, cur
	}
	return slices.Max(cur)
}

// total is the predicted seconds of phases, the partners' latency included.
func (m *model) total(phases []phase) float64 {
	var t float64
	for _, p := range phases {
		t += m.time(p)
	}
	return t + m.partnerLatency(phases, t)
}

// exchange is a phase of whole-buffer transfers between the given pairs.
func (m *model) exchange(pairs [][2]int) phase {
	ph := phase{steps: 1}
	for _, p := range pairs {
		ph.flows = append(ph.flows, flow{p[0], p[1], m.bytes})
		ph.lat = max(ph.lat, m.alpha(p[0], p[1]))
	}
	return ph
}

func (m *model) recursiveDoubling() []phase {
	p := 1
	for p*2 <= m.n {
		p *= 2
	}
	rem := m.n - p
	var fold, back [][2]int
	for r := 0; r < 2*rem; r += 2 {
		fold, back = append(fold, [2]int{r, r + 1}), append(back, [2]int{r + 1, r})
	}
	real := func(v int) int {
		if v < rem {
			return 2*v + 1
		}
		return v + rem
	}
	var phases []phase
	if rem > 0 {
		phases = append(phases, m.exchange(fold))
	}
	for mask := 1; mask < p; mask <<= 1 {
		var pairs [][2]int
		for v := range p {
			pairs = append(pairs, [2]int{real(v), real(v ^ mask)})
		}
		phases = append(phases, m.exchange(pairs))
	}
	if rem > 0 {
		phases = append(phases, m.exchange(back))
	}
	return phases
}

// binomial is the rounds of a binomial broadcast from Root (a Reduce runs
// them backwards, over the same links).
func (m *model) binomial() []phase { return m.binomialFrom(m.root) }

// chain pipelines the buffer along root, root+1, ... (reversed for Reduce:
// the same links and times).
func (m *model) chain() []phase {
	k, c := m.chunks(m.bytes)
	ph := phase{steps: m.n - 1, chunks: k}
	for i := range m.n - 1 {
		src, dst := (m.root+i)%m.n, (m.root+i+1)%m.n
		ph.flows = append(ph.flows, flow{src, dst, m.bytes})
		ph.lat += m.alpha(src, dst)
		ph.fill += c / m.rate(src, dst)
	}
	return []phase{ph}
}

func (m *model) binomialFrom(root int) []phase {
	top := 1
	for top < m.n {
		top <<= 1
	}
	var phases []phase
	for bit := top >> 1; bit > 0; bit >>= 1 {
		var pairs [][2]int
		for v := 0; v+bit < m.n; v += 2 * bit {
			pairs = append(pairs, [2]int{(v + root) % m.n, (v + bit + root) % m.n})
		}
		phases = append(phases, m.exchange(pairs))
	}
	return phases
}

// problem is an AllReduce of bytes over members, at some level.
type problem struct {
	members []int
	bytes   float64
}

// Pieces of the pipelined hierarchical AllReduce (collective's
// hierpipe.go, which calls HierPieces): at most HierPiecesMax, each of at
// least HierPieceChunks chunks.
const (
	HierPiecesMax   = 8
	HierPieceChunks = 8
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

// HierPieces is how many pieces the hierarchical AllReduce cuts a buffer
// of bytes in, with chunks of chunkBytes.
func HierPieces(bytes, chunkBytes int) int {
	return max(1, min(HierPiecesMax, bytes/(HierPieceChunks*max(1, chunkBytes))))
}

// hierarchical is the pipelined hierarchical AllReduce: P pieces, each
// through every level's phases (hierPhases of bytes/P), all pieces at
// once. The first piece takes the sum of its phases (sum); each further
// one its bottleneck B, the slowest phase's load (its links' time without
// its steps' latencies, which the pieces running at once overlap: with
// them, 4 x 4 x 4 ranks over a 5 ms WAN of 8 lanes were 2.3x gocoll sim's
// time at 16 MiB) or, where the phases running at
// once share a link (a host's NIC carries its site's rings and its WAN
// traffic), that link's load of one piece of every phase, plus part of
// the rest of a piece, B x s x (P-1)/2P with s = 1 - B/sum: the phases
// off the bottleneck overlap with it only in part, the more so the more
// pieces (fitted to gocoll sim on the 2x2x2 lab grid: WAN 10x slower than
// the LAN, and uniform links, 1 to 8 pieces). A last phase adds the
// further pieces.
func (m *model) hierarchical() []phase {
	p := HierPieces(int(m.bytes), int(m.chunk))
	piece := m.hierPhases([]problem{{m.identity(), m.bytes / float64(p)}}, 0)
	if p == 1 || len(piece) == 0 {
		return piece
	}
	rest := phase{overlap: true}
	var sum float64
	for _, ph := range piece {
		load := m.time(phase{flows: ph.flows, overlap: true})
		rest.lat, sum = max(rest.lat, load), sum+m.time(ph)
		for _, f := range ph.flows {
			rest.flows = append(rest.flows, flow{f.src, f.dst, f.bytes})
		}
	}
	b := max(rest.lat, m.time(phase{flows: rest.flows, overlap: true}))
	f := float64(p-1) * (1 + (1-b/sum)*float64(p-1)/float64(2*p))
	rest.lat *= f
	for i := range rest.flows {
		rest.flows[i].bytes *= f
	}
	return append(piece, rest)
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
			m.ring(&pre, pr.members, 2*float64(n-1)/float64(n)*pr.bytes, 2*(n-1))
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
			m.ring(&pre, g, share, len(g)-1)
			m.ring(&post, g, share, len(g)-1)
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
			m.ring(ph, pr.members, pr.bytes, 1)
		}
		return
	}
	for _, pr := range pairs {
		a, b := pr.members[0], pr.members[1]
		ph.flows = append(ph.flows, flow{a, b, pr.bytes}, flow{b, a, pr.bytes})
		ph.lat = max(ph.lat, m.alpha(a, b), m.alpha(b, a))
		ph.steps = 1
	}
}
