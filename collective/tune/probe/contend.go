package probe

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
)

// The contended round. A level's one measuring pair runs while the other
// ranks wait, but a collective's phase moves bytes on every pair of a
// level at once: on a machine whose cores the ranks share (the two-site
// lab's 8 ranks on 2 cores) a byte then costs the transport about twice
// the CPU an idle pair's does (bench/results/model_lab, session 14:
// 0.154-0.217 CPU-seconds a 4 MiB AllReduce against the model's
// 0.067-0.114), and a site's uplink carries several transfers at once,
// which one lone transfer may undershoot (the lab's WAN: 70 MB/s in a
// third of the lone transfers, 90-95 in the rest; a tree AllReduce of 256
// MiB moved its 537 MB a direction at 88 MB/s). So after the pairs'
// figures, every level runs one round in which each of its pairs
// (LevelPairs) moves contendBytes at once, one way, and an acknowledgement
// back; each rank of a pair reads its CPU time around it: their CPU a byte
// is the level's CPUPerByteBusy, and on a multipath level (Options.
// Multipath) the round's aggregate its bandwidth where it beats the lone
// transfers'. Cost: a barrier (an AllReduce of one value) a level, about a
// BulkBytes through each sending link (a site's uplink over the WAN: one
// more bulk transfer's time; contendSpread of them on a multipath level,
// in the lab ~0.13 s more; more where k pairs leave by one link and k × 4
// KiB, contendBytes' floor, exceeds that: 4096 WAN pairs through an
// uplink move 16 MiB) and the CPU of the pairs' bytes; before those, busyRoundTrips small round trips of
// every pair at once (the level's busy latency; a WAN pair's 8 round
// trips of the lab's 4.2 ms take ~34 ms).

// LevelPairs returns the pairs of level l (0 host, 1 site, 2 WAN) of topo
// that run its contended round, by communicator rank: each rank, in rank
// order, with the lowest unpaired rank above it that it meets at level l
// (on its host; on its site, another host; on another site); and k, the
// most pairs whose first ranks share the link a transfer of the level
// leaves by (a rank's port on its host, a host's NIC, a site's uplink).
// The same on every rank: a pure function of topo, in O(n log n) (a scan
// of the ranks above each was minutes at 65536 ranks in cyclic placement).
func LevelPairs(topo topology.Topology, l int) (pairs [][2]int, k int) {
	n := topo.Size()
	if l < 0 || l > 2 {
		return nil, 0
	}
	// A rank's partner is in its group (level 0: its host; 1: its site;
	// 2: the job) but not in its own part of it (0: itself; 1: its host;
	// 2: its site). Each part is a queue of its unpaired ranks in rank
	// order, and each group a heap of its parts by their first ranks: a
	// rank taken in rank order is the first of its part, and its partner
	// the first of the group's lowest other part (the heap's root, or one
	// of the root's children where the root is the rank's own part).
	host, site := make([]string, n), make([]string, n)
	groupOf, partOf := map[string]*partHeap{}, map[string]*part{}
	parts := make([]*part, n)
	for r := range n {
		ri, _ := topo.Rank(r)
		host[r], site[r] = ri.Host, ri.SiteName()
		g := [3]string{"host " + host[r], "site " + site[r], ""}[l]
		pk := [3]string{"rank " + strconv.Itoa(r), "host " + host[r], "site " + site[r]}[l]
		p := partOf[pk]
		if p == nil {
			if groupOf[g] == nil {
				groupOf[g] = &partHeap{}
			}
			p = &part{group: groupOf[g], at: -1}
			partOf[pk] = p
		}
		p.ranks = append(p.ranks, r)
		parts[r] = p
	}
	for _, p := range partOf {
		heap.Push(p.group, p)
	}
	paired := make([]bool, n)
	groups := map[string]int{}
	for a := range n {
		if paired[a] {
			continue
		}
		pa := parts[a]
		pa.pop() // a is its part's first unpaired rank
		g := *pa.group
		var pb *part
		switch {
		case len(g) > 0 && g[0] != pa:
			pb = g[0]
		case len(g) > 2 && g[2].first() < g[1].first():
			pb = g[2]
		case len(g) > 1:
			pb = g[1]
		}
		if pb == nil {
			continue
		}
		b := pb.first()
		pb.pop()
		paired[a], paired[b] = true, true
		pairs = append(pairs, [2]int{a, b})
		key := [3]string{"rank " + strconv.Itoa(a), "host " + host[a], "site " + site[a]}[l]
		groups[key]++
		k = max(k, groups[key])
	}
	return pairs, k
}

// part is a queue of unpaired ranks of one part of a group (LevelPairs),
// in rank order, at index at of its group's heap (-1: not in it).
type part struct {
	ranks []int
	next  int
	group *partHeap
	at    int
}

func (p *part) first() int { return p.ranks[p.next] }

// pop takes the part's first rank off and keeps the heap in order.
func (p *part) pop() {
	p.next++
	if p.next == len(p.ranks) {
		heap.Remove(p.group, p.at)
	} else {
		heap.Fix(p.group, p.at)
	}
}

// partHeap is a group's parts with ranks left, lowest first rank first
// (container/heap).
type partHeap []*part

func (h partHeap) Len() int           { return len(h) }
func (h partHeap) Less(i, j int) bool { return h[i].first() < h[j].first() }
func (h partHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *partHeap) Push(x any) {
	p := x.(*part)
	p.at = len(*h)
	*h = append(*h, p)
}
func (h *partHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	p.at = -1
	return p
}

// contendBytes is what each pair of a level moves in its contended round:
// BulkBytes shared by the k pairs that leave by one link, so that the
// link carries about one bulk transfer, and at most a contendSpread-th of
// it (the host level's pairs each have their own ports: 4 pairs of 4 MiB
// over shared memory on the lab's 2 cores took tens of ms for no better
// figure), at least 4 KiB a pair. On a multipath level (Options.Multipath)
// the round's aggregate is the level's bandwidth where it beats the lone
// transfers (contendedFigures), so the link carries contendSpread bulk
// transfers (each pair at most one): in the two-site lab, 1 MiB a pair
// put the 4 WAN pairs' aggregate at 4.3-84.4 MB/s of the uplink's ~97 in
// 17 of 18 probes (load 11-14; the pairs took 26-103 ms for 1 MiB, 42 ms
// at a fair share: they started apart and the slowest pair's time made
// the figure); 4 MiB a pair 73-96 in 12 of 14 (session 25, probe25).
func contendBytes(bulk, k int, multipath bool) int {
	if multipath {
		return max(4<<10, bulk*contendSpread/max(k, contendSpread))
	}
	return max(4<<10, bulk/max(k, contendSpread))
}

const contendSpread = 4

// contended is one rank's result of a level's contended round (contend).
type contended struct {
	took, cpu, rtt float64
	multipath      bool // every rank said the level is (the barrier's)
	bytes          int  // each pair's (size's)
}

// contend runs rank c.Rank()'s part of a level's contended round over
// pairs (LevelPairs), every rank of c together: first a barrier (an
// AllReduce of one value: whether some rank says the level is not
// multipath, mine this rank's Options.Multipath), so that no rank's round
// starts while another rank is still in a lower level's round (a rank in
// no lower-level pair would otherwise wait in its Recv for its partner's
// earlier round, and that wait would count as this level's time and CPU),
// and the pairs start together (started apart they overlap less than the
// round assumes, and k × bytes over the slowest pair's own duration
// exceeds what the link carried); then its pair's transfer of
// size(multipath) bytes, multipath whether every rank said the level is,
// nothing where it is in no pair; on a multipath level, whose bandwidth
// the round's aggregate may set, after a second barrier that every rank
// joins once its pair's round trips (below) are done. Its result, the
// same multipath and bytes on every rank: the seconds of the pair's
// transfer to the acknowledgement on the pair's first rank (else 0: the
// round's span is the most of them) and this rank's CPU seconds over its
// transfer (0 where cpu is nil).
//
// Before its bytes, each pair makes busyRoundTrips round trips of 8
// bytes, all pairs at once: on the pair's first rank, rtt is their median
// (else 0), its busy round trip (busyLatency makes the level's of the
// pairs'): what a small message's step costs while every rank of the
// level takes part, as in a collective's step.
func contend(ctx context.Context, c *collective.Comm, pairs [][2]int, mine bool, size func(multipath bool) int, now func() time.Duration, cpu func() time.Duration) (contended, error) {
	not := make([]float64, 1)
	if !mine {
		not[0] = 1
	}
	if err := collective.AllReduce(ctx, c, not, not, collective.Max); err != nil {
		return contended{}, fmt.Errorf("the barrier before it: %w", err)
	}
	out := contended{multipath: not[0] == 0}
	out.bytes = size(out.multipath)
	me := c.Rank()
	var ours [2]int
	in := false
	for _, p := range pairs {
		if p[0] == me || p[1] == me {
			ours, in = p, true
			break
		}
	}
	ack := make([]byte, 8)
	if in {
		var err error
		if out.rtt, err = busyTrips(ctx, c, ours, ack, now); err != nil {
			return contended{}, err
		}
	}
	if out.multipath {
		// The aggregate counts here: the pairs' transfers start together,
		// not as each pair's round trips end (in the lab they ended tens of
		// ms apart, and a pair that started late ran partly alone: 120 MB/s
		// over 4 links of 25).
		if err := collective.AllReduce(ctx, c, make([]float64, 1), make([]float64, 1), collective.Max); err != nil {
			return contended{}, fmt.Errorf("the barrier after the round trips: %w", err)
		}
	}
	if !in {
		return out, nil
	}
	p, buf := ours, touchedBuffer(out.bytes)
	var cpu0 time.Duration
	if cpu != nil {
		cpu0 = cpu()
	}
	start := now()
	if p[0] == me {
		if err := collective.Send(ctx, c, buf, p[1]); err != nil {
			return contended{}, err
		}
		if err := collective.Recv(ctx, c, ack, p[1]); err != nil {
			return contended{}, err
		}
		out.took = (now() - start).Seconds()
	} else {
		if err := collective.Recv(ctx, c, buf, p[0]); err != nil {
			return contended{}, err
		}
		if err := collective.Send(ctx, c, ack, p[0]); err != nil {
			return contended{}, err
		}
	}
	if cpu != nil {
		out.cpu = (cpu() - cpu0).Seconds()
	}
	return out, nil
}

// busyLatency is a level's busy latency from its pairs' busy round trips
// (seconds, 0: none): half the lower median of those measured, so that
// one pair's stall does not make the level's figure (the lab at load ~35:
// one site pair's median round trip 14 ms, the others' 0.1-0.9 ms).
func busyLatency(rtts []float64) time.Duration {
	return min(time.Duration(lowerMedianMeasured(rtts)/2*float64(time.Second)), topology.MaxLatency)
}

// lowerMedianMeasured is the lower median of the positive values of vs
// (those measured), 0 if none is.
func lowerMedianMeasured(vs []float64) float64 {
	var got []float64
	for _, v := range vs {
		if v > 0 {
			got = append(got, v)
		}
	}
	if len(got) == 0 {
		return 0
	}
	slices.Sort(got)
	return got[(len(got)-1)/2]
}

// busyRoundTrips is how many round trips of 8 bytes each pair of a level
// makes in its contended round (contend): a level's pairs all at once.
const busyRoundTrips = 8

// busyTrips runs pair p's round trips of msg (busyRoundTrips), p[0]
// sending first, and returns their median in seconds on p[0] (0 on p[1]).
func busyTrips(ctx context.Context, c *collective.Comm, p [2]int, msg []byte, now func() time.Duration) (float64, error) {
	trips := make([]float64, busyRoundTrips)
	for i := range trips {
		if p[0] == c.Rank() {
			start := now()
			if err := collective.Send(ctx, c, msg, p[1]); err != nil {
				return 0, err
			}
			if err := collective.Recv(ctx, c, msg, p[1]); err != nil {
				return 0, err
			}
			trips[i] = (now() - start).Seconds()
			continue
		}
		if err := collective.Recv(ctx, c, msg, p[0]); err != nil {
			return 0, err
		}
		if err := collective.Send(ctx, c, msg, p[0]); err != nil {
			return 0, err
		}
	}
	slices.Sort(trips)
	return trips[len(trips)/2], nil
}

// contendedFigures derives a level's figures from its contended round:
// npairs pairs of bytes each, k of them through one link; took, the
// round's span (the slowest pair's seconds); cpu, the paired ranks' CPU
// seconds together (< 0: some rank's unknown); rtt, the level's median
// round trip; trip, a ping-pong round trip's CPU, both ends; single, the
// lone pairs' bandwidth (the best of them); multipath, whether one
// connection of the level spreads its bytes over every path
// (Options.Multipath). It returns the level's bandwidth and a byte's CPU
// (0: not measured).
//
// The bandwidth: on a multipath level, the round's k × bytes over its
// time less a round trip, where that is more than single: a connection
// re-picks its paths onto every link within seconds (MetaRoCE), so a
// long transfer sees the links' total, which the round, every link busy,
// shows, while a lone connection may sit on some of the links only (the
// lab's 4 WAN links: 3 of them in about 4 connections in 10; in the quiet
// sweep of 2026-12-06 16:38 all 3 lone pairs did, 71.9 MB/s, and the job's
// ring then ran at the 4 links' rate, 0.75 of the prediction). Elsewhere
// single: a connection is one path (TCP: one ECMP link), so the lone
// transfer is what a transfer gets, and the round's aggregate, more
// lanes than one, is not one transfer's (Link.Lanes are not measured).
func contendedFigures(npairs, k, bytes int, took, cpu, rtt, trip, single float64, multipath bool) (bandwidth, perByte float64) {
	bandwidth = single
	if multipath {
		bandwidth = max(single, aggregate(k, bytes, took, rtt))
	}
	if cpu >= 0 && npairs > 0 {
		perByte = max(0, cpu-float64(npairs)*trip) / float64(npairs*bytes)
	}
	return bandwidth, min(perByte, topology.MaxCPUPerByte)
}

// aggregate is a contended round's rate through its busiest link: k
// pairs' bytes over took, the slowest pair's seconds, less rtt, a round
// trip (the first byte's way and the acknowledgement's), where took is
// more than twice it; 0 where took is not positive.
func aggregate(k, bytes int, took, rtt float64) float64 {
	if took <= 0 || k <= 0 {
		return 0
	}
	if took > 2*rtt {
		took -= rtt
	}
	return float64(k*bytes) / took
}

// rounds is the contended rounds of a probe: per level its pairs and how
// many leave by one link, and the figures every rank shares
// (figures[l] the slowest pair's seconds at level l, figures[3+l*n+r]
// rank r's CPU seconds + 1 over it, 0: unknown; figures[3+3n+l*n+r] the
// busy round trip at level l of the pair whose first rank is r, contend's
// rtt, 0 for other ranks).
type rounds struct {
	pairs     [3][][2]int
	k         [3]int
	multipath [3]bool // every rank said so (contend's barrier)
	bytes     [3]int  // each pair's in the round
	n         int
	figures   []float64
}

// runRounds runs this rank's part of every measured level's contended
// round, after every lone pair's (else a round's transfers would load a
// lone pair's measurement) and each level's after the one below it, all
// ranks starting each round together (contend's barrier), and fills in
// its figures.
func runRounds(ctx context.Context, c *collective.Comm, topo topology.Topology, opts Options) (rounds, error) {
	n := c.Size()
	rs := rounds{n: n, figures: make([]float64, 3+6*n)}
	for l, p := range Pairs(topo) {
		if p[0] < 0 || opts.Skip[l] {
			continue
		}
		rs.pairs[l], rs.k[l] = LevelPairs(topo, l)
		k := rs.k[l]
		r, err := contend(ctx, c, rs.pairs[l], opts.Multipath[l], func(m bool) int { return contendBytes(opts.BulkBytes, k, m) }, opts.Now, opts.CPUTime)
		if err != nil {
			return rounds{}, fmt.Errorf("probe: level %d, the contended round: %w", l, err)
		}
		rs.multipath[l], rs.bytes[l] = r.multipath, r.bytes
		rs.figures[l], rs.figures[3+3*n+l*n+c.Rank()] = r.took, r.rtt
		if opts.CPUTime != nil {
			rs.figures[3+l*rs.n+c.Rank()] = 1 + r.cpu
		}
	}
	return rs, nil
}

// apply sets level l's link from the shared figures (rs.figures' layout)
// of its round, where it ran: its bandwidth and CPUPerByteBusy
// (contendedFigures; rtt the level's median round trip, trip a ping-pong's
// CPU, both ends, < 0 unknown: then no CPU figure), and its LatencyBusy
// (busyLatency of the pairs' busy round trips) where the level has CPU
// figures (trip known): a CPU figure, as the others. It returns the
// round's part of the level's Detail.
func (rs rounds) apply(figures []float64, l int, link *topology.Link, rtt, trip float64) Detail {
	pairs := rs.pairs[l]
	if len(pairs) == 0 {
		return Detail{}
	}
	if trip >= 0 {
		rtts := make([]float64, 0, len(pairs))
		for _, p := range pairs {
			rtts = append(rtts, figures[3+3*rs.n+l*rs.n+p[0]])
		}
		link.LatencyBusy = busyLatency(rtts)
	}
	cpu := 0.0
	for _, p := range pairs {
		for _, r := range p {
			if v := figures[3+l*rs.n+r]; v > 0 && cpu >= 0 && trip >= 0 {
				cpu += v - 1
			} else {
				cpu = -1
			}
		}
	}
	bytes := rs.bytes[l]
	bw, perByte := contendedFigures(len(pairs), rs.k[l], bytes, figures[l], cpu, rtt, max(0, trip), link.Bandwidth, rs.multipath[l])
	link.Bandwidth = bw
	if perByte > 0 {
		link.CPUPerByteBusy = perByte
	}
	return Detail{Pairs: len(pairs), K: rs.k[l], Bytes: bytes, Multipath: rs.multipath[l], Contended: aggregate(rs.k[l], bytes, figures[l], rtt)}
}
