package tune

import "slices"

// cpuTieMargin is how close two candidates' predictions may lie, one of
// them bound by the CPU term, before the links alone rank them.
//
// The CPU term rests on the probe's CPU a byte and a message, measured on
// a machine whose load moves them (bench/results/model_lab, sessions 14
// and 15): where it binds, two algorithms' predictions within a few
// percent are a tie those figures cannot break, while the links' figures
// are measured by transfers, not CPU clocks, and do not move so. (In the
// two-site lab's quiet window of session 15, auto ran the ring 16 MiB
// AllReduce, 0.085 GB/s where the hierarchical one reaches 0.101, in 2 of 8
// runs; the cause there was the busy CPU a byte's pricing of then, which
// put the ring 14 % ahead: beyond this margin.
// bench/results/quiet-20261205-1010/auto16. The busy figure is priced
// again since session 20, by busyShare, in the CPU a call spends; since
// session 28 the roofline prices a byte at the least of the probe's
// figures, boundByte: on those sessions' runs the hierarchical one leads
// at 16 MiB.)
const cpuTieMargin = 0.10

// breakCPUTie puts the second of out (sorted fastest first) first where
// the two lie within cpuTieMargin of the first's time, either is bound by
// the CPU term, and the links alone (the model without its CPU figures)
// predict the second faster. It changes nothing where no CPU figure is
// known, so a tie is only ever broken one way: the model without CPU
// figures has no CPU-bound candidate.
func breakCPUTie(coll Collective, in Input, out []Prediction) {
	if len(out) < 2 || !out[0].CPUBound && !out[1].CPUBound ||
		float64(out[1].Time) > float64(out[0].Time)*(1+cpuTieMargin) {
		return
	}
	free, err := Predict(coll, withoutCPUInput(in))
	if err != nil {
		return
	}
	if timeOf(free, out[1].Algorithm) < timeOf(free, out[0].Algorithm) {
		out[0], out[1] = out[1], out[0]
	}
}

// timeOf is algo's predicted time in ps, or the longest Duration if ps has
// no such candidate.
func timeOf(ps []Prediction, algo string) float64 {
	for _, p := range ps {
		if p.Algorithm == algo {
			return float64(p.Time)
		}
	}
	return float64(1<<63 - 1)
}

// withoutCPUInput is in without CPU figures, in its Links and its
// topology's (WithoutCPU).
func withoutCPUInput(in Input) Input {
	in.Topology = WithoutCPU(in.Topology)
	for _, l := range []*Link{&in.Links.Host, &in.Links.Site, &in.Links.WAN} {
		noCPU(l)
	}
	in.Links.Pairs = slices.Clone(in.Links.Pairs)
	noCPUPairs(in.Links.Pairs)
	in.Links.ReducePerByte = 0
	return in
}
