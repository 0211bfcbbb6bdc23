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
	reduce     float64  // CPU seconds a received byte's reduction costs (Links.ReducePerByte)
	ideal      bool     // Input.IdealTransport: no opening round trips (opening.go)
	flat       bool     // phases take max(links, roofline), no overlapTime (treeChannels)
	scratch    loadScratch
}

func newModel(in Input) *model {
	n := in.Topology.Size()
	m := &model{n: n, host: make([]int, n), site: make([]int, n), bytes: float64(in.Bytes),
		chunk: float64(in.ChunkBytes), root: in.Root, links: [3]Link{in.Links.Host, in.Links.Site, in.Links.WAN},
		ideal: in.IdealTransport}
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
	m.reduce = in.Links.ReducePerByte
	m.cpu = newCPUModel(in.Topology, m.links, m.reduce)
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

// flow is a transfer of bytes from src to dst, of which dst reduces the
// share reduce (0-1) into its own buffer (cpuWork prices the reduction).
type flow struct {
	src, dst int
	bytes    float64
	reduce   float64
}

// reducing returns ph with every flow's reduce share set to share.
func reducing(ph phase, share float64) phase {
	for i := range ph.flows {
		ph.flows[i].reduce = share
	}
	return ph
}

// phase is transfers that run at once: steps dependent steps whose
// latencies sum to lat. A pipelined phase moves its flows in chunks
// chunks, the first of which takes fill seconds along the longest path:
// it takes lat + fill + (chunks-1)/chunks of the busiest link's load. In
// an overlapped phase (rings, whose messages are posted ahead) the
// latencies hide behind the busiest link: max(lat, load), or, in the
// operation's last phase, max(lat, load + flight) (phase.last). Else,
// lat + load.
type phase struct {
	flows   []flow
	steps   int
	lat     float64
	fill    float64
	chunks  int
	overlap bool
	serial  bool      // one chunk in flight per flow (trees)
	cold    bool      // its receivers slept: hops at their cold latency (cold.go)
	rings   []ringRun // the rings of an overlapped phase, whose chunks' transfers lie on its latency path
	// last: the operation's last phase (set by total). The operation ends
	// when the last byte of its busiest link has landed, one latency of
	// that link after it left: an overlapped ring phase that ends the
	// operation takes at least the busiest link's load plus the longest
	// latency of the flows through it (the flat ring's 4 MiB AllReduce on
	// the lab's 2x2x2 grid and on 4x8x8 was priced 2.0 ms, one WAN
	// latency, under gocoll sim's time, 1.024-1.028; at 1 MiB, 1.11). An
	// earlier phase's flight overlaps the next phase's start, and the
	// hierarchical AllReduce's further pieces (its last phase, no rings)
	// hide its phases' flights but for the last piece's last phase's:
	// tail, which that phase (rest) adds when it ends the operation.
	last bool
	tail float64
	// hide is the seconds of the phase that run inside an earlier phase's
	// latency (the hierarchical AllReduce's further pieces inside the
	// first piece's WAN latency chain, hierKeyed): time subtracts it.
	hide float64
	// opening is the round trips the transport takes to open the
	// phase's connections (opening.go): a tree's own (tree), another
	// phase's set by total.
	opening float64
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
// links' time, its connections' opening and its steps' scheduling cost,
// or what its CPU work allows on the machines' cores, the longer (cpu.go),
// or more where the two are close and few chunks feed the links
// (overlapTime).
func (m *model) time(p phase) float64 {
	bound, sched := m.cpuTime(p)
	return overlapTime(m.linkTime(p)+p.opening+sched, bound, m.feeders(p)) - p.hide
}

// feeders is how many chunks in flight feed phase p's busiest link, for
// overlapTime: a tree's (serial) flows through it, one chunk each; 0
// (perfect overlap) for other phases, which keep many posted ahead, where
// no machine has more of the phase's ranks than cores (busyShare: then no
// rank waits for a core, and the cores are no shared station), and while
// treeChannels compares channel counts (model.flat).
func (m *model) feeders(p phase) int {
	if !p.serial || !m.cpu.on || m.flat || !slices.ContainsFunc(m.busyShare(p), func(s float64) bool { return s > 0 }) {
		return 0
	}
	m.loads(p)
	return m.scratch.neckFlows
}

// linkTime is the phase's seconds on its links alone.
func (m *model) linkTime(p phase) float64 {
	sc := &m.scratch
	bw, landed := m.loads(p)
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
			hop[i] = m.hopAlpha(p, h[0], h[1]) + r.chunk/m.rate(h[0], h[1])
		}
		lat = max(lat, chainLatency(hop, r.steps))
	}
	switch {
	case p.overlap && p.last && len(p.rings) > 0:
		return max(lat, landed)
	case p.overlap && p.last:
		return max(lat, bw+p.tail)
	case p.overlap:
		return max(lat, bw)
	case p.chunks > 0: // at least the busiest link's load, where flows share it
		return p.lat + max(p.fill+bw*float64(p.chunks-1)/float64(p.chunks), links)
	}
	return p.lat + bw
}

// loads returns the phase's busiest link's load (seconds on one lane)
// and the latest its last byte lands: the longest of a link's load plus
// the longest latency of the flows through it.
func (m *model) loads(p phase) (bw, landed float64) {
	sc := &m.scratch
	for _, f := range p.flows {
		a := m.alpha(f.src, f.dst)
		m.path(f.src, f.dst, func(r resource, l Link) {
			ld := sc.load(r, l)
			ld.busy += f.bytes / l.Bandwidth
			ld.flows++
			ld.flight = max(ld.flight, a)
		})
	}
	return sc.busiest()
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

// total is the predicted seconds of phases, the partners' latency and the
// connections' opening (opening.go) included.
func (m *model) total(phases []phase) float64 {
	open := m.scratch.open
	clear(open)
	var t float64
	for i, p := range phases {
		p.last = i == len(phases)-1
		p.opening = m.opening(p, open)
		t += m.time(p)
	}
	return t + m.partnerLatency(phases, t)
}

// exchange is a phase of whole-buffer transfers between the given pairs.
func (m *model) exchange(pairs [][2]int) phase {
	ph := phase{steps: 1}
	for _, p := range pairs {
		ph.flows = append(ph.flows, flow{p[0], p[1], m.bytes, 0})
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
		phases = append(phases, reducing(m.exchange(fold), 1))
	}
	for mask := 1; mask < p; mask <<= 1 {
		var pairs [][2]int
		for v := range p {
			pairs = append(pairs, [2]int{real(v), real(v ^ mask)})
		}
		phases = append(phases, reducing(m.exchange(pairs), 1))
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
		ph.flows = append(ph.flows, flow{src, dst, m.bytes, 0})
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
