package tune

import (
	"math"
	"slices"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/topology"
)

// The CPU term. Where the link figures give the CPU a level's transport
// costs (Link.CPUPerByte, CPUPerByteBusy, CPUPerMessage) and the ranks'
// machines their cores (RankInfo.CPU.Machine, CPUs and Cores), a phase
// takes at least
//
//	max(max over machines of (CPU work of its ranks' ends) / cores,
//	    max over ranks of (CPU work of its ends))                (roofline)
//
// (a rank's transport work is serial: one core, however many its machine
// has), and where more of a machine's ranks than it has cores receive at once
// (the phase's slowest hops, which end together), those beyond the cores
// wait for the others' messages: each of the phase's steps costs
// (R − C) / C × the CPU of one such message more (scheduling), or, where
// the receivers' levels have a busy latency (Link.LatencyBusy: the probe's
// small round trips of every pair of the level at once), what it adds to
// the level's latency, the more (in the two-site lab, 8 ranks on 2 cores,
// a step of recursive doubling or of the hierarchical AllReduce at 8 B
// took ~130 µs beyond the links, the quiet per-message CPU gave 6-51 µs,
// and the MetaRoCE core in virtual time, which costs no CPU, none:
// bench/results/model_lab/s19). A flow's
// work is its bytes × a byte's CPU + its messages × CPUPerMessage, half on
// each end's machine. The roofline prices a byte at its level's least
// measured CPU (boundByte: CPUPerByte, or CPUPerByteBusy where that is
// less); the CPU the phase spends (Prediction.CPU) prices it at
// CPUPerByte where the phase keeps no more of a machine's ranks busy than
// it has cores, CPUPerByteBusy (the probe's contended round: every pair
// of the level at once) where it keeps them all busy, and in between by
// the busy ranks beyond the cores (busyShare), but the excess over the
// roofline's price only as far as the machine's cores would otherwise
// idle through the phase (cpuSpent). A byte's CPU is mostly its
// datagrams' wake-ups (bench/results/cpu_lab/coal27.md: 40 CPU-µs and
// 0.6 context switches a 9000 B datagram over the WAN at GOMAXPROCS 1),
// and a receiver woken less often reads more datagrams a wake-up: the
// contended round's sparser arrivals (k pairs through one link) cost
// 1.5-2x the lone pair's a byte, while where the cores set the pace the
// datagrams wait for a core and batch. On this session's AMD machine the
// lab's calls at 4 and 256 MiB ran faster than the busy price allows
// on its 2 cores (the 256 MiB ring: 17.6 CPU-s priced, 5.43 s a call)
// and within the lone one (10.5), the figures of runs at load 25-35 were
// 15-25 % under the quiet window's, and turning the transports' spinning
// off left the busy excess as it was (bench/results/model_lab/model28).
// Ranks whose
// Machine is empty stand on a machine of
// their host. A machine's cores are the size of the union of its ranks'
// CPU sets (RankInfo.CPU.CPUs: ranks bound a core each count as many
// cores as ranks, unbound ones all the CPUs they may use), with the most
// Cores reported by a rank without a set if that is more; a machine of
// unknown cores (0) binds nothing. Without CPU figures, or where the
// cores suffice, the term changes nothing.

// cpuModel is what the model knows of the ranks' machines.
type cpuModel struct {
	machine []int // rank -> machine index
	cores   []int // machine -> its cores (see the CPU term above); 0 unknown
	ranks   []int // machine -> its ranks
	on      bool  // some level has CPU figures and some machine its cores
}

func newCPUModel(t topology.Topology, links [3]Link, reduce float64) cpuModel {
	c := cpuModel{machine: make([]int, t.Size())}
	ids := map[string]int{}
	// Per machine, the union of its ranks' CPUs, and the lists already in
	// it (the ranks of a machine mostly share a few lists).
	var sets [][affinity.MaxCPUs / 64]uint64
	var lists []map[string]bool
	var union []int // per machine, the CPUs in its set
	for r := range c.machine {
		ri, _ := t.Rank(r)
		key := "machine:" + ri.CPU.Machine
		if ri.CPU.Machine == "" {
			key = "host:" + ri.Host
		}
		i, ok := ids[key]
		if !ok {
			i = len(c.cores)
			ids[key] = i
			c.cores = append(c.cores, 0)
			sets = append(sets, [affinity.MaxCPUs / 64]uint64{})
			lists = append(lists, map[string]bool{})
			union = append(union, 0)
		}
		c.machine[r] = i
		c.on = c.on || ri.CPU.Cores > 0
		if lists[i][ri.CPU.CPUs] {
			continue
		}
		if ri.CPU.CPUs == "" { // no list: its cores, without Parse's error (an allocation a rank)
			c.cores[i] = max(c.cores[i], ri.CPU.Cores)
			continue
		}
		if cpus, err := affinity.Parse(ri.CPU.CPUs); err == nil {
			lists[i][ri.CPU.CPUs] = true
			for _, cpu := range cpus {
				if w, b := &sets[i][cpu/64], uint64(1)<<(cpu%64); *w&b == 0 {
					*w |= b
					union[i]++
				}
			}
		} else {
			c.cores[i] = max(c.cores[i], ri.CPU.Cores)
		}
	}
	for i, n := range union {
		c.cores[i] = max(c.cores[i], n)
	}
	c.ranks = make([]int, len(c.cores))
	for _, i := range c.machine {
		c.ranks[i]++
	}
	figures := reduce > 0
	for _, l := range links {
		figures = figures || l.CPUPerByte > 0 || l.CPUPerByteBusy > 0 || l.CPUPerMessage > 0
	}
	c.on = c.on && figures
	return c
}

// messages returns, per flow of phase p, how many messages it sends: a
// ring's flow one per step of its ring, a pipelined phase's (trees,
// chains) one per chunk, else (exchanges, and the further pieces of the
// hierarchical AllReduce) one per chunk of its bytes, at least one.
func (m *model) messages(p phase) []float64 {
	steps := map[[2]int]int{}
	for _, r := range p.rings {
		for _, h := range r.hops {
			steps[h] = max(steps[h], r.steps)
		}
	}
	out := make([]float64, len(p.flows))
	for i, f := range p.flows {
		out[i] = max(1, float64(p.chunks), math.Ceil(f.bytes/m.chunk), float64(steps[[2]int{f.src, f.dst}]))
	}
	return out
}

// cpuLink is the figures whose CPU costs a transfer from a to b bears: its
// level's (a pair link's bandwidth and latency do not change the
// transport's CPU).
func (m *model) cpuLink(a, b int) Link { return m.links[m.level(a, b)] }

// busyShare returns, per machine, how far phase p keeps its cores busy,
// from 0 (no more of its ranks take part in p's flows than it has
// cores, or its cores are unknown) to 1 (all its ranks do, as in the
// probe's contended round): (R − C) / (N − C) for R of its N ranks taking
// part and C cores. A byte's CPU on the machine is CPUPerByte plus that
// share of CPUPerByteBusy − CPUPerByte (byteCPU).
//
// Session 15 priced the busy figure and found it over-priced the
// hierarchical 16 MiB AllReduce's CPU (0.50-0.61 s a call against the
// 0.27 s the job used then). Since then the transport's CPU a byte has
// changed (bench/results/cpu_lab) and the lone figure has fallen short:
// in session 19's end window (load 3-6, bench/results/quiet-20261206-0326)
// the lab took 1.20-1.41x the model at 4 MiB and 1.05-1.26x at 256 MiB
// for ring, tree and hierarchical, CPU-bound, the job spending 1.3-1.9x
// the CPU the lone figure priced, while the busy figure on the same runs'
// files put them at 0.88-1.26 (bench/results/model_lab/s20).
func (m *model) busyShare(p phase) []float64 {
	share := make([]float64, len(m.cpu.cores))
	counted := map[int]bool{}
	for _, f := range p.flows {
		for _, r := range []int{f.src, f.dst} {
			if !counted[r] {
				counted[r] = true
				share[m.cpu.machine[r]]++
			}
		}
	}
	for i, busy := range share {
		c, n := float64(m.cpu.cores[i]), float64(m.cpu.ranks[i])
		share[i] = 0
		if c > 0 && busy > c && n > c {
			share[i] = min(1, (busy-c)/(n-c))
		}
	}
	return share
}

// byteCPU is a byte's CPU over l on a machine kept busy by share
// (busyShare): CPUPerByte, or where the level has a busy figure, share of
// the way from it to CPUPerByteBusy. A nil share (cpuWork's) prices
// boundByte.
func byteCPU(l Link, share []float64, machine int) float64 {
	switch {
	case l.CPUPerByteBusy <= 0:
		return l.CPUPerByte
	case share == nil:
		return boundByte(l)
	}
	return l.CPUPerByte + share[machine]*(l.CPUPerByteBusy-l.CPUPerByte)
}

// boundByte is a byte's CPU over l where the cores set the pace: the
// least of the probe's figures (CPUPerByte, CPUPerByteBusy where known),
// the one with the fewest wake-ups a datagram (see the CPU term above).
func boundByte(l Link) float64 {
	if l.CPUPerByteBusy > 0 {
		return min(l.CPUPerByte, l.CPUPerByteBusy)
	}
	return l.CPUPerByte
}

// cpuWork returns phase p's CPU seconds per machine, per rank and in all,
// a byte priced by share (per machine, busyShare; nil: the roofline's
// boundByte). A byte costs its level's byteCPU on each end's machine (half its CPU on
// each), a message its CPUPerMessage, and the share of a flow's bytes its
// receiver reduces (flow.reduce: a reduce-scatter's, a tree's way up)
// ReducePerByte more on the receiver. The probe measures the reduction
// alone (a kernel over a chunk's buffers), and the transport's byte CPU
// by transfers that do not reduce; where a transport reduces as it
// copies (shared memory's fused reduce-copy), the two overlap and this
// is the more of it.
func (m *model) cpuWork(p phase, share []float64) (machines, ranks []float64, all float64) {
	machines, ranks = make([]float64, len(m.cpu.cores)), make([]float64, len(m.cpu.machine))
	msgs := m.messages(p)
	for i, f := range p.flows {
		l := m.cpuLink(f.src, f.dst)
		for _, r := range []int{f.src, f.dst} {
			k := m.cpu.machine[r]
			w := (f.bytes*byteCPU(l, share, k) + msgs[i]*l.CPUPerMessage.Seconds()) / 2
			if r == f.dst {
				w += f.bytes * f.reduce * m.reduce
			}
			machines[k] += w
			ranks[r] += w
			all += w
		}
	}
	return machines, ranks, all
}

// cpuTime returns the least seconds phase p's CPU work allows on the
// machines' cores (the roofline, at least the busiest rank's work on one
// core) and what its steps' scheduling adds (see above); both 0 where the
// model knows no CPU costs.
func (m *model) cpuTime(p phase) (bound, sched float64) {
	if !m.cpu.on || len(p.flows) == 0 {
		return 0, 0
	}
	work, ranks, _ := m.cpuWork(p, nil)
	for i, w := range work {
		if c := m.cpu.cores[i]; c > 0 {
			bound = max(bound, w/float64(c))
		}
	}
	for r, w := range ranks {
		if m.cpu.cores[m.cpu.machine[r]] > 0 {
			bound = max(bound, w)
		}
	}
	// The receivers that end a step together: those of the phase's
	// slowest hops (within a factor 2), per machine.
	var slowest float64
	for _, f := range p.flows {
		slowest = max(slowest, m.alpha(f.src, f.dst))
	}
	recv := map[int]bool{}
	count := make([]int, len(m.cpu.cores))
	msgCPU := make([]float64, len(m.cpu.cores))
	busy := make([]float64, len(m.cpu.cores))
	for _, f := range p.flows {
		if m.alpha(f.src, f.dst) < slowest/2 || recv[f.dst] {
			continue
		}
		recv[f.dst] = true
		i := m.cpu.machine[f.dst]
		count[i]++
		l := m.cpuLink(f.src, f.dst)
		msgCPU[i] += l.CPUPerMessage.Seconds()
		if l.LatencyBusy > l.Latency {
			busy[i] += (l.LatencyBusy - l.Latency).Seconds()
		}
	}
	for i, r := range count {
		if c := m.cpu.cores[i]; c > 0 && r > c {
			step := max(float64(r-c)/float64(c)*msgCPU[i], busy[i]) / float64(r)
			sched = max(sched, float64(p.steps)*step)
		}
	}
	return bound, sched
}

// cpuSeconds is the CPU seconds of phases, all ranks together (cpuSpent).
func (m *model) cpuSeconds(phases []phase) float64 {
	var all float64
	for _, p := range phases {
		all += m.cpuSpent(p)
	}
	return all
}

// cpuSpent is the CPU seconds phase p spends, all ranks together: on each
// machine its work at the busy share's price (busyShare), but no more
// than its work at the roofline's price (boundByte) or, where that is
// more, its cores' time over the phase's links and roofline: the excess
// a byte costs over the roofline's price is the wake-ups of a receiver
// that would otherwise idle, which a busy core does not take (see the CPU
// term above). A machine of unknown cores spends the busy price.
func (m *model) cpuSpent(p phase) float64 {
	if len(p.flows) == 0 {
		return 0
	}
	busy, _, _ := m.cpuWork(p, m.busyShare(p))
	least, _, _ := m.cpuWork(p, nil)
	bound, _ := m.cpuTime(p)
	t := max(m.linkTime(p), bound)
	var all float64
	for i, w := range busy {
		if c := m.cpu.cores[i]; c > 0 {
			w = min(w, max(least[i], float64(c)*t))
		}
		all += w
	}
	return all
}

// cpuBinds reports whether the CPU term sets the time of some of phases,
// or lengthens it (overlapTime).
func (m *model) cpuBinds(phases []phase) bool {
	for _, p := range phases {
		bound, sched := m.cpuTime(p)
		if lt := m.linkTime(p); sched > 0 || bound > lt || overlapTime(lt, bound, m.feeders(p)) > lt {
			return true
		}
	}
	return false
}

// Machines returns how many machines t's ranks run on (RankInfo.CPU.Machine,
// or their host where that is empty), and the most ranks and the fewest
// known cores (0: none known) of one of them: what `gocoll topo --explain`
// says of the CPU term's ground.
func Machines(t topology.Topology) (machines, ranks, cores int) {
	c := newCPUModel(t, [3]Link{}, 0)
	per := make([]int, len(c.cores))
	for _, i := range c.machine {
		per[i]++
	}
	for i, n := range per {
		ranks = max(ranks, n)
		if k := c.cores[i]; k > 0 && (cores == 0 || k < cores) {
			cores = k
		}
	}
	return len(c.cores), ranks, cores
}

// WithoutCPU returns t with no CPU figures in its Links (a copy): the
// model of t without the CPU term, for comparison (gocoll topo --no-cpu).
func WithoutCPU(t topology.Topology) topology.Topology {
	if t.Links == nil {
		return t
	}
	ls := &topology.Links{Pairs: slices.Clone(t.Links.Pairs)}
	for _, l := range []struct{ from, to **topology.Link }{{&t.Links.Host, &ls.Host}, {&t.Links.Site, &ls.Site}, {&t.Links.WAN, &ls.WAN}} {
		if *l.from != nil {
			k := **l.from
			noCPU(&k)
			*l.to = &k
		}
	}
	noCPUPairs(ls.Pairs)
	ls.ReducePerByte = 0
	t.Links = ls
	return t
}

// noCPU clears l's CPU figures, the busy and the cold latency among them.
func noCPU(l *Link) {
	l.CPUPerByte, l.CPUPerByteBusy, l.CPUPerMessage, l.LatencyBusy, l.LatencyCold = 0, 0, 0, 0, 0
}

// noCPUPairs clears the CPU figures of every pair of ps (in place).
func noCPUPairs(ps []topology.HostLink) {
	for i := range ps {
		noCPU(&ps[i].Link)
	}
}
