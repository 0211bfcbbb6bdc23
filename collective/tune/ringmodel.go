package tune

import (
	"math"
	"slices"
)

// chunks cuts b bytes into pipeline chunks: their number and size.
func (m *model) chunks(b float64) (int, float64) {
	k := max(1, int(math.Ceil(b/m.chunk)))
	return k, b / float64(k)
}

// ring adds to ph a ring over members, each sending perFlow bytes to the
// next in steps dependent steps, of which the next reduces the share
// reduce (a reduce-scatter's 1, an all-gather's 0, an AllReduce's 1/2).
func (m *model) ring(ph *phase, members []int, perFlow float64, steps int, reduce float64) {
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
		ph.flows = append(ph.flows, flow{src, dst, perFlow, reduce})
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
		m.ring(&ph, members, 2*float64(n-1)/float64(n)*m.bytes/float64(len(strides)), 2*(n-1), 0.5)
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
