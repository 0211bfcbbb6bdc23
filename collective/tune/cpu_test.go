package tune

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/topology"
)

// onMachines places grid's ranks: machine(r) names rank r's machine ("":
// unknown), with cores cores.
func onMachines(t *testing.T, tp topology.Topology, machine func(r int) string, cores int) topology.Topology {
	t.Helper()
	for i := range tp.Ranks {
		tp.Ranks[i].CPU.Machine, tp.Ranks[i].CPU.Cores = machine(tp.Ranks[i].Rank), cores
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return tp
}

func predictAll(t *testing.T, in Input) map[string]Prediction {
	t.Helper()
	ps, err := Predict(AllReduce, in)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Prediction{}
	for _, p := range ps {
		out[p.Algorithm] = p
	}
	return out
}

// Two ranks on two hosts of one machine of one core exchange 1 MiB: the
// exchange's link time is 10 µs + 1 MiB at 1 GB/s, but both ends' CPU,
// 2 × 1 MiB × 1 ns, runs on the one core and sets the time. With two
// cores, or on two machines, the links set it again.
func TestCPURoofline(t *testing.T) {
	links := DefaultLinks()
	links.Site = Link{Latency: 10 * time.Microsecond, Bandwidth: 1e9, CPUPerByte: 1e-9}
	const mib = 1 << 20
	// The links' and the CPU's terms alone: no opening round trip.
	in := Input{Bytes: mib, ChunkBytes: mib, Links: links, IdealTransport: true}
	linkTime := 10*time.Microsecond + time.Duration(mib) // 1 ns a byte at 1 GB/s
	for _, tc := range []struct {
		name    string
		machine func(int) string
		cores   int
		want    time.Duration
		binds   bool
	}{
		{"one machine, one core", func(int) string { return "m" }, 1, 2 * mib, true},
		{"one machine, two cores", func(int) string { return "m" }, 2, linkTime, false},
		{"a machine per host", func(int) string { return "" }, 1, linkTime, false},
		{"cores unknown", func(int) string { return "m" }, 0, linkTime, false},
	} {
		in.Topology = onMachines(t, grid(t, 1, 2, 1), tc.machine, tc.cores)
		rd := predictAll(t, in)["recursive-doubling"]
		if rd.Time != tc.want || rd.CPUBound != tc.binds || rd.CPU != 2*mib {
			t.Errorf("%s: recursive doubling %v (CPU %v, binds %v), want %v (CPU %v, binds %v)",
				tc.name, rd.Time, rd.CPU, rd.CPUBound, tc.want, time.Duration(2*mib), tc.binds)
		}
	}
}

// Where the CPU does not bind (a machine per host of many cores, and each
// level's CPU a message and a byte, both ends together, below its latency
// and its time a byte, so that no rank's own work binds either:
// TestCPUOneRankOneCore), the CPU figures change no prediction; where it
// does (the lab's 2 sites × 2 hosts × 2 ranks on one machine of 2 cores),
// every algorithm takes at least as long, some longer, at every size.
func TestCPUTermOnlyWhereItBinds(t *testing.T) {
	plain := DefaultLinks()
	costly := plain
	costly.Host.CPUPerByte, costly.Host.CPUPerMessage = 0.2e-9, 1500*time.Nanosecond
	costly.Site.CPUPerByte, costly.Site.CPUPerMessage = 0.6e-9, 20*time.Microsecond
	costly.WAN.CPUPerByte, costly.WAN.CPUPerMessage = 4e-9, 100*time.Microsecond
	spread := onMachines(t, grid(t, 2, 2, 2), func(int) string { return "" }, 64)
	shared := onMachines(t, grid(t, 2, 2, 2), func(int) string { return "lab" }, 2)
	for _, bytes := range []int{8, 64 << 10, 4 << 20, 256 << 20} {
		base := predictAll(t, Input{Topology: spread, Bytes: bytes, ChunkBytes: 2 << 20, Links: plain})
		same := predictAll(t, Input{Topology: spread, Bytes: bytes, ChunkBytes: 2 << 20, Links: costly})
		bound := predictAll(t, Input{Topology: shared, Bytes: bytes, ChunkBytes: 2 << 20, Links: costly})
		longer := 0
		for algo, b := range base {
			if same[algo].Time != b.Time || same[algo].CPUBound {
				t.Errorf("%d B %s: %v with CPU figures on free cores (binds %v), %v without", bytes, algo, same[algo].Time, same[algo].CPUBound, b.Time)
			}
			if b.CPU != 0 || same[algo].CPU == 0 {
				t.Errorf("%d B %s: CPU %v without figures, %v with", bytes, algo, b.CPU, same[algo].CPU)
			}
			switch {
			case bound[algo].Time < b.Time:
				t.Errorf("%d B %s: %v on 2 shared cores, faster than %v on free ones", bytes, algo, bound[algo].Time, b.Time)
			case bound[algo].Time > b.Time:
				longer++
				if !bound[algo].CPUBound {
					t.Errorf("%d B %s: longer on shared cores but not marked CPU-bound", bytes, algo)
				}
			}
		}
		if longer == 0 {
			t.Errorf("%d B: no algorithm slower on 8 ranks sharing 2 cores", bytes)
		}
	}
}

// The ranks of a step that end together on a machine beyond its cores
// wait for each other's messages: 8 ranks on one machine exchanging 8 B
// at once (recursive doubling's rounds: 3 steps, every rank receiving at
// each) take (8 − 2) / 2 messages' CPU more per step on 2 cores, none on
// 8 (where each round's CPU, a message of 1 µs per rank, hides behind
// its 2 µs latency).
func TestCPUScheduling(t *testing.T) {
	links := DefaultLinks()
	links.Host.CPUPerMessage = time.Microsecond
	in := Input{Bytes: 8, ChunkBytes: 1 << 20, Links: links}
	in.Topology = onMachines(t, grid(t, 1, 1, 8), func(int) string { return "m" }, 8)
	free := predictAll(t, in)["recursive-doubling"]
	in.Topology = onMachines(t, grid(t, 1, 1, 8), func(int) string { return "m" }, 2)
	busy := predictAll(t, in)["recursive-doubling"]
	if want := free.Time + 3*3*time.Microsecond; busy.Time != want || !busy.CPUBound || free.CPUBound {
		t.Errorf("recursive doubling of 8 ranks: %v on 2 cores (binds %v), want %v (%v on 8, binds %v)", busy.Time, busy.CPUBound, want, free.Time, free.CPUBound)
	}
}

// Where the level's busy latency is known (Link.LatencyBusy: the probe's
// round trips of every pair at once), a step of more receivers than
// cores waits what it adds to the level's latency, where that is more
// than the receivers' messages' CPU: 8 ranks on a machine of 2 cores,
// recursive doubling of 8 B, 3 steps of 50 µs more each (against 3 µs of
// CPU), nothing more on 8 cores or without the figure; gocoll topo
// --no-cpu (WithoutCPU) leaves it out.
func TestCPUSchedulingBusyLatency(t *testing.T) {
	links := DefaultLinks()
	links.Host.CPUPerMessage = time.Microsecond
	in := Input{Bytes: 8, ChunkBytes: 1 << 20, Links: links}
	in.Topology = onMachines(t, grid(t, 1, 1, 8), func(int) string { return "m" }, 2)
	quiet := predictAll(t, in)["recursive-doubling"]
	in.Links.Host.LatencyBusy = links.Host.Latency + 50*time.Microsecond
	busy := predictAll(t, in)["recursive-doubling"]
	if want := quiet.Time - 3*3*time.Microsecond + 3*50*time.Microsecond; busy.Time != want {
		t.Errorf("recursive doubling of 8 ranks on 2 cores: %v with the busy latency, want %v (%v without)", busy.Time, want, quiet.Time)
	}
	in.Topology = onMachines(t, grid(t, 1, 1, 8), func(int) string { return "m" }, 8)
	in.Links.Host.LatencyBusy = 0
	free := predictAll(t, in)["recursive-doubling"]
	in.Links.Host.LatencyBusy = links.Host.Latency + 50*time.Microsecond
	if got := predictAll(t, in)["recursive-doubling"]; got.Time != free.Time {
		t.Errorf("on 8 cores: %v with the busy latency, want %v as without", got.Time, free.Time)
	}
	tp := onMachines(t, grid(t, 1, 1, 8), func(int) string { return "m" }, 2)
	tp.Links = &topology.Links{Host: &in.Links.Host}
	if l := WithoutCPU(tp).Links.Host; l.LatencyBusy != 0 || tp.Links.Host.LatencyBusy == 0 {
		t.Errorf("WithoutCPU: busy latency %v (the original's %v), want 0 in the copy", l.LatencyBusy, tp.Links.Host.LatencyBusy)
	}
}

// onCPUs is onMachines with each rank's CPUs: cpus(r) is rank r's cpu list.
func onCPUs(t *testing.T, tp topology.Topology, machine func(r int) string, cpus func(r int) string) topology.Topology {
	t.Helper()
	for i := range tp.Ranks {
		c := &tp.Ranks[i].CPU
		c.Machine, c.CPUs = machine(tp.Ranks[i].Rank), cpus(tp.Ranks[i].Rank)
		list, err := affinity.Parse(c.CPUs)
		if err != nil {
			t.Fatal(err)
		}
		c.Cores = len(list)
	}
	if err := tp.Validate(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// 8 ranks a host on 2 hosts, each host a machine of 8 CPUs (review B14
// M1). Started with gocoll run --bind-to core, each rank runs on one CPU
// of its own (cores 1, cpus "i"); unbound, on all 8 (cores 8, cpus
// "0-7"). The machine has the same 8 cores either way: the predictions
// (and the choice) must not change. Bound 8 ranks to 2 CPUs
// (oversubscribed), the machine counts 2, as unbound ranks of a machine of
// 2 CPUs do.
func TestCPUBoundRanksCountTheirUnion(t *testing.T) {
	links := DefaultLinks()
	links.Host.CPUPerByte, links.Host.CPUPerMessage = 0.4e-9, 5*time.Microsecond
	links.Site.CPUPerByte, links.Site.CPUPerMessage = 1.5e-9, 40*time.Microsecond
	host := func(r int) string { return fmt.Sprintf("m%d", r/8) }
	cases := []struct {
		name        string
		bound, free func(r int) string
	}{
		{"a core each", func(r int) string { return fmt.Sprint(r % 8) }, func(int) string { return "0-7" }},
		{"two cores shared", func(r int) string { return fmt.Sprint(2 + r%2) }, func(int) string { return "2-3" }},
	}
	for _, c := range cases {
		bound := onCPUs(t, grid(t, 1, 2, 8), host, c.bound)
		free := onCPUs(t, grid(t, 1, 2, 8), host, c.free)
		for _, bytes := range []int{8, 64 << 10, 4 << 20, 64 << 20} {
			in := Input{Bytes: bytes, ChunkBytes: 2 << 20, Links: links}
			in.Topology = free
			u := predictAll(t, in)
			cu, _ := Choose(AllReduce, in)
			in.Topology = bound
			b := predictAll(t, in)
			cb, _ := Choose(AllReduce, in)
			for algo, p := range u {
				if b[algo].Time != p.Time {
					t.Errorf("%s, %d B %s: %v bound (binds %v), %v unbound", c.name, bytes, algo, b[algo].Time, b[algo].CPUBound, p.Time)
				}
			}
			if cu.Algorithm != cb.Algorithm {
				t.Errorf("%s, %d B: chooses %s bound, %s unbound", c.name, bytes, cb.Algorithm, cu.Algorithm)
			}
		}
	}
	_, _, cores := Machines(onCPUs(t, grid(t, 1, 2, 8), host, cases[0].bound))
	if cores != 8 {
		t.Errorf("Machines: %d cores for 8 ranks bound a core each, want 8", cores)
	}
}

// One rank on each of 2 machines of 64 cores, a link of 10 GB/s whose
// transport costs 1 ns of CPU a byte (0.5 ns on each end: 5x the link's
// 0.1 ns a byte), 64 MiB (review B14 L2). A rank's transport work is
// serial (one core), not spread over its machine's 64 cores: the roofline
// is at least the busiest rank's work, one end's 33.5 ms; the machines'
// 64 cores alone would predict about the link's 6.7 ms.
func TestCPUOneRankOneCore(t *testing.T) {
	links := DefaultLinks()
	links.Site = Link{Latency: 10 * time.Microsecond, Bandwidth: 10e9, CPUPerByte: 1e-9}
	const size = 64 << 20
	in := Input{Bytes: size, ChunkBytes: 1 << 20, Links: links}
	in.Topology = onMachines(t, grid(t, 1, 2, 1), func(r int) string { return fmt.Sprint("m", r) }, 64)
	rd := predictAll(t, in)["recursive-doubling"]
	perRank := time.Duration(float64(size) * 0.5) // 0.5 ns a byte on each end
	if rd.Time < perRank || !rd.CPUBound {
		t.Errorf("2 ranks, one a machine of 64 cores: predicted %v (binds %v), less than one end's CPU %v on one core", rd.Time, rd.CPUBound, perRank)
	}
	// Where the cores are unknown, nothing binds, the rank's own bound
	// included.
	in.Topology = onMachines(t, grid(t, 1, 2, 1), func(r int) string { return fmt.Sprint("m", r) }, 0)
	if rd := predictAll(t, in)["recursive-doubling"]; rd.CPUBound {
		t.Errorf("machines of unknown cores: %v binds", rd.Time)
	}
}

// The roofline prices a byte at the least of the lone pair's and the busy
// figure (Link.CPUPerByteBusy, boundByte); the CPU spent lies between
// them by how many of a machine's ranks beyond its cores the phase keeps
// busy (busyShare), its excess capped by the cores' time (cpuSpent): two
// ranks of one machine exchange 1 MiB (link time 10 µs + 1 MiB at
// 1 GB/s). On one core both ranks are busy, as in the probe's contended
// round, but the core sets the pace: the exchange takes 2 × 1 MiB × the
// least figure on it, and spends no more. On four cores the lone figure
// stands and the links set the time.
func TestCPUBusyByte(t *testing.T) {
	const mib = 1 << 20
	link := 10e-6 + mib/1e9
	for _, tc := range []struct {
		name           string
		lone, busy     float64
		cores          int
		wantT, wantCPU float64
		binds          bool
	}{
		{"one core, no busy figure", 1e-9, 0, 1, 2 * mib * 1e-9, 2 * mib * 1e-9, true},
		{"one core", 1e-9, 4e-9, 1, 2 * mib * 1e-9, 2 * mib * 1e-9, true},
		{"one core, busy under lone", 1e-9, 0.8e-9, 1, 2 * mib * 0.8e-9, 2 * mib * 0.8e-9, true},
		{"four cores, no busy figure", 0.5e-9, 0, 4, link, mib * 1e-9, false},
		{"four cores", 0.5e-9, 2e-9, 4, link, mib * 1e-9, false},
	} {
		links := DefaultLinks()
		links.Site = Link{Latency: 10 * time.Microsecond, Bandwidth: 1e9, CPUPerByte: tc.lone, CPUPerByteBusy: tc.busy}
		in := Input{Bytes: mib, ChunkBytes: mib, Links: links, IdealTransport: true,
			Topology: onMachines(t, grid(t, 1, 2, 1), func(int) string { return "m" }, tc.cores)}
		rd := predictAll(t, in)["recursive-doubling"]
		near := func(d time.Duration, want float64) bool { return math.Abs(d.Seconds()-want) < 2e-9 }
		if !near(rd.Time, tc.wantT) || !near(rd.CPU, tc.wantCPU) || rd.CPUBound != tc.binds {
			t.Errorf("%s: recursive doubling %v (CPU %v, binds %v), want %.6g s (CPU %.6g s, binds %v)",
				tc.name, rd.Time, rd.CPU, rd.CPUBound, tc.wantT, tc.wantCPU, tc.binds)
		}
	}
}

// The CPU a phase spends (cpuSpent) prices the busy figure where the links
// set the pace, its excess over the roofline's price capped by the cores'
// time over the phase: four ranks of one machine AllReduce 1 MiB by
// recursive doubling over links of 100 MB/s (each step's exchange ~10.5
// ms; all four ranks busy, the busy figure 3 ns a byte, the lone 1 ns).
// On two cores the step's busy CPU (4 MiB × 3 ns, 12.6 ms) fits in the
// cores' 21 ms and is spent whole; on one core it is capped at the
// core's ~10.5 ms a step, and the links still set the time (the
// roofline's 4.2 ms a step).
func TestCPUSpentCapped(t *testing.T) {
	const mib = 1 << 20
	for _, cores := range []int{2, 1} {
		links := DefaultLinks()
		links.Site = Link{Latency: 10 * time.Microsecond, Bandwidth: 1e8, CPUPerByte: 1e-9, CPUPerByteBusy: 3e-9}
		in := Input{Bytes: mib, ChunkBytes: mib, Links: links, IdealTransport: true,
			Topology: onMachines(t, grid(t, 1, 4, 1), func(int) string { return "m" }, cores)}
		rd := predictAll(t, in)["recursive-doubling"]
		want := 2 * 4 * mib * 3e-9
		if cores == 1 {
			want = rd.Time.Seconds()
		}
		if rd.CPUBound || math.Abs(rd.CPU.Seconds()-want) > 0.01*want {
			t.Errorf("%d cores: recursive doubling %v, CPU %v (binds %v), want CPU %.4g s, links binding",
				cores, rd.Time, rd.CPU, rd.CPUBound, want)
		}
	}
}

// busyShare: of a machine's 6 ranks on 2 cores, a phase that keeps 2 busy
// is at the lone figure (0), 4 half way (2 beyond the cores of the 4 the
// probe's round keeps beyond them), all 6 at the busy one (1); a machine
// of 8 cores is never busy; one of unknown cores neither.
func TestCPUBusyShare(t *testing.T) {
	for _, tc := range []struct {
		cores int
		ends  []int // ranks in the phase's flows, paired in order
		want  float64
	}{
		{2, []int{0, 1}, 0},
		{2, []int{0, 1, 2, 3}, 0.5},
		{2, []int{0, 1, 2, 3, 4, 5}, 1},
		{2, []int{0, 5, 5, 0, 1, 5}, 0.25},
		{8, []int{0, 1, 2, 3, 4, 5}, 0},
		{0, []int{0, 1, 2, 3, 4, 5}, 0},
	} {
		links := DefaultLinks()
		links.Site.CPUPerByte = 1e-9
		m := newModel(Input{Bytes: 1, ChunkBytes: 1, Links: links,
			Topology: onMachines(t, grid(t, 1, 6, 1), func(int) string { return "m" }, tc.cores)})
		var p phase
		for i := 0; i < len(tc.ends); i += 2 {
			p.flows = append(p.flows, flow{tc.ends[i], tc.ends[i+1], 1, 0})
		}
		if got := m.busyShare(p); len(got) != 1 || math.Abs(got[0]-tc.want) > 1e-12 {
			t.Errorf("%d cores, ends %v: share %v, want [%v]", tc.cores, tc.ends, got, tc.want)
		}
	}
}

// The reduction's CPU (Links.ReducePerByte, or a topology file's
// reduce_per_byte) goes to the receiver of each byte it reduces: two
// ranks of one machine AllReduce 1 MiB. Recursive doubling's exchange
// moves 1 MiB each way and each end reduces all it receives; the ring's
// two steps move 1 MiB each way, half of it reduced (the reduce-scatter's
// step). On one core the CPU sets the time; on four, where no rank's
// own work outlasts the links either, the links do. The
// model without CPU figures (WithoutCPU) prices no reduction.
func TestCPUReduction(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name         string
		cores        int
		inFile       bool
		lone, reduce float64
	}{
		{"one core", 1, false, 1e-9, 0.5e-9},
		{"one core, from the file", 1, true, 1e-9, 0.5e-9},
		{"four cores", 4, false, 0.2e-9, 0.1e-9}, // a rank's own work under the links' time too
	} {
		lone, reduce := tc.lone, tc.reduce
		wantRD, wantRing := 2*mib*lone+2*mib*reduce, 2*mib*lone+2*mib*reduce/2
		links := DefaultLinks()
		links.Site = Link{Latency: 10 * time.Microsecond, Bandwidth: 1e9, CPUPerByte: lone}
		topo := onMachines(t, grid(t, 1, 2, 1), func(int) string { return "m" }, tc.cores)
		if tc.inFile {
			topo.Links = &topology.Links{ReducePerByte: reduce}
		} else {
			links.ReducePerByte = reduce
		}
		in := Input{Bytes: mib, ChunkBytes: mib, Links: links, Topology: topo, IdealTransport: true}
		all := predictAll(t, in)
		near := func(d time.Duration, want float64) bool { return math.Abs(d.Seconds()-want) < 2e-9 }
		rd, ring := all["recursive-doubling"], all["ring"]
		if !near(rd.CPU, wantRD) || !near(ring.CPU, wantRing) {
			t.Errorf("%s: CPU recursive doubling %v, ring %v; want %.6g s, %.6g s", tc.name, rd.CPU, ring.CPU, wantRD, wantRing)
		}
		if tc.cores == 1 && (!near(rd.Time, wantRD) || !rd.CPUBound) {
			t.Errorf("%s: recursive doubling %v (binds %v), want its CPU %.6g s on the one core", tc.name, rd.Time, rd.CPUBound, wantRD)
		}
		if link := 10e-6 + mib/1e9; tc.cores == 4 && (!near(rd.Time, link) || rd.CPUBound) {
			t.Errorf("%s: recursive doubling %v (binds %v), want the links' %.6g s", tc.name, rd.Time, rd.CPUBound, link)
		}
		free := withoutCPUInput(in)
		if f := predictAll(t, free)["recursive-doubling"]; f.CPU != 0 || f.CPUBound {
			t.Errorf("%s: without CPU figures, recursive doubling's CPU %v (binds %v)", tc.name, f.CPU, f.CPUBound)
		}
		if tc.inFile && WithoutCPU(topo).Links.ReducePerByte != 0 {
			t.Errorf("WithoutCPU kept the file's reduce_per_byte")
		}
		var out strings.Builder
		if err := Explain(&out, AllReduce, in); err != nil || !strings.Contains(out.String(), "# CPU a byte reduced: ") {
			t.Errorf("%s: explain says nothing of the reduction (%v):\n%s", tc.name, err, out.String())
		}
	}
	// Out of range: refused, naming the field.
	in := Input{Bytes: 8, ChunkBytes: 8, Links: DefaultLinks(), Topology: grid(t, 1, 2, 1)}
	in.Links.ReducePerByte = -1
	if _, err := Predict(AllReduce, in); err == nil || !strings.Contains(err.Error(), "Links.ReducePerByte -1") {
		t.Errorf("ReducePerByte -1: %v", err)
	}
}
