package tune

// linkLoad is one resource's load in a phase (linkTime): seconds of
// transfer on one lane, the flows that cross it and its lanes.
type linkLoad struct {
	busy   float64
	flows  int
	lanes  int
	flight float64 // the longest one-way latency of its flows (linkTime's ring flight)
}

// loadScratch is linkTime's and partnerLatency's memory, kept across a
// model's phases so that a phase allocates nothing in proportion to its
// flows (review B16 F3: a map entry and a load per resource a phase, ~2M
// allocations a Predict at 4096 ranks): dense holds the loads of the
// resources of kinds 0-7 at base[kind]+idx, conns the connections' (kind
// 8, by src×n+dst through connAt), touched the dense entries to reset;
// talked is partnerLatency's.
type loadScratch struct {
	base      [8]int
	dense     []linkLoad
	touched   []int
	connAt    map[int]int
	conns     []linkLoad
	edges     map[[2]int]float64
	talked    []bool
	open      map[[2]int]bool // total's connections opened (opening.go)
	neckFlows int             // the flows through the busiest load (busiest)
}

// newLoadScratch sizes the scratch for n ranks, hosts, sites and pair
// links.
func newLoadScratch(n, hosts, sites, pairs int) loadScratch {
	var sc loadScratch
	at := 0
	for k, size := range [8]int{n, n, hosts, hosts, sites, sites, pairs, pairs} {
		sc.base[k], at = at, at+size
	}
	sc.dense, sc.connAt, sc.edges, sc.open = make([]linkLoad, at), map[int]int{}, map[[2]int]float64{}, map[[2]int]bool{}
	return sc
}

// load returns r's entry in the scratch (linkLoad), made with l's lanes at
// its first flow of the phase.
func (sc *loadScratch) load(r resource, l Link) *linkLoad {
	if r.kind == 8 {
		i, ok := sc.connAt[r.idx]
		if !ok {
			i = len(sc.conns)
			sc.connAt[r.idx] = i
			sc.conns = append(sc.conns, linkLoad{lanes: max(1, l.Lanes)})
		}
		return &sc.conns[i]
	}
	i := sc.base[r.kind] + r.idx
	ld := &sc.dense[i]
	if ld.flows == 0 {
		ld.lanes = max(1, l.Lanes)
		sc.touched = append(sc.touched, i)
	}
	return ld
}

// busiest returns the longest of the phase's loads on one lane each
// (busy over the lanes its flows use), and the longest of a load plus its
// flows' flight (linkLoad.flight: the last byte through that resource
// lands that much after it left), and resets the scratch; neckFlows is
// left the number of flows through the busiest.
func (sc *loadScratch) busiest() (bw, landed float64) {
	sc.neckFlows = 0
	take := func(l *linkLoad) {
		t := l.busy / float64(min(l.flows, l.lanes))
		if t > bw {
			bw, sc.neckFlows = t, l.flows
		}
		landed = max(landed, t+l.flight)
	}
	for _, i := range sc.touched {
		take(&sc.dense[i])
		sc.dense[i] = linkLoad{}
	}
	for i := range sc.conns {
		take(&sc.conns[i])
	}
	sc.touched, sc.conns = sc.touched[:0], sc.conns[:0]
	clear(sc.connAt)
	return bw, landed
}
