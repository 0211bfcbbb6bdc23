package tune

// The overlap of a tree's links and cores. A phase needs its links for
// link seconds and the machines' cores for cpu seconds (the roofline,
// cpu.go); the model's least time is the longer, max(link, cpu), which a
// call reaches only if each resource always has work while the other
// holds the rest. A tree's edge moves one chunk at a time (phase.serial):
// a chunk crosses the edge, then its receiver must get a core to take it
// in (receive, reduce, forward) before that edge's next chunk goes. So
// the busiest link is fed by as many chunks as flows cross it, and it
// idles whenever all of them wait for a core, as the cores idle whenever
// every runnable rank waits for a link. That is a closed network of two
// stations (the link, shared fairly by its flows; the cores, shared
// fairly by the ranks: both processor sharing, so the product form, and
// mean value analysis, hold whatever the distribution of a chunk's
// times) with as many customers as chunks in flight (overlapTime). With
// one resource far longer than the other it gives that one's time; with
// the two equal and n chunks, (n+1)/n of it. In the two-site lab on the
// AMD machine (2 cores, 8 ranks) the 256 MiB tree's links (5.56 s, four
// flows through a WAN direction) and roofline (4.96 s) are that close,
// and the calls took 6.17-7.46 s (bench/results/model_lab/model30.md),
// where on the machine before, whose CPU figures put the roofline far
// under the links, they took the links' time (0.97-1.07 of the model).
// Rings and the hierarchical pipeline keep many chunks posted ahead on
// every flow (32 MiB a ring's, collective's ringLookaheadBytes): their
// phases take the max.

// overlapTime is the seconds a closed network of two processor-sharing
// stations takes to serve work that needs a seconds of the one and b of
// the other, with n customers (chunks in flight) circulating: mean value
// analysis. It is max(a, b) for n <= 0 (perfect overlap), a + b for
// n == 1 (none), and between them otherwise, falling towards max(a, b)
// as n grows or as one station's share grows. a, b >= 0.
func overlapTime(a, b float64, n int) float64 {
	hi := max(a, b)
	if n <= 0 || a <= 0 || b <= 0 {
		return hi
	}
	// Per circulation a customer needs x = a/hi and y = b/hi (the longer
	// one is 1): the throughput X(n) in circulations a second, and the
	// time is hi / X(n) (hi circulations' work at X).
	x, y := a/hi, b/hi
	var qa, qb, tput float64
	for k := 1; k <= n; k++ {
		ra, rb := x*(1+qa), y*(1+qb)
		tput = float64(k) / (ra + rb)
		qa, qb = tput*ra, tput*rb
	}
	return hi / tput
}
