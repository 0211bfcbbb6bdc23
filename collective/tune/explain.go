package tune

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Explain writes, for coll on in, every candidate with its predicted time,
// fastest first, and marks the one Choose picks: what `gocoll topo
// --explain` is to print. Where the CPU term is on (cpu.go: CPU figures
// and the machines' cores known), it says what it stands on (machines,
// ranks and cores, the CPU a byte and a message costs per level) and
// gives each candidate's CPU, all ranks together, marked "(binds)" where
// it sets some phase's time.
func Explain(w io.Writer, coll Collective, in Input) error {
	p, err := Predict(coll, in)
	if err != nil {
		return err
	}
	t := in.Topology
	fixed := ""
	if in.Channels > 0 {
		fixed = fmt.Sprintf(", %d channels asked", in.Channels)
	}
	fmt.Fprintf(w, "# %v of %d B on %d ranks (%d hosts, %d sites), chunk %d B%s\n",
		coll, in.Bytes, t.Size(), len(t.Hosts()), len(t.Sites()), in.ChunkBytes, fixed)
	ls := in.Links.With(t)
	on := newCPUModel(t, [3]Link{ls.Host, ls.Site, ls.WAN}, ls.ReducePerByte).on
	if on { // the CPU term's ground (cpu.go)
		machines, ranks, cores := Machines(t)
		fmt.Fprintf(w, "# %d machines, at most %d ranks on one, the fewest cores %d (0: unknown); CPU a byte (busy) / a message: host %.3g ns (%.3g) / %v, site %.3g ns (%.3g) / %v, wan %.3g ns (%.3g) / %v\n",
			machines, ranks, cores, ls.Host.CPUPerByte*1e9, ls.Host.CPUPerByteBusy*1e9, ls.Host.CPUPerMessage,
			ls.Site.CPUPerByte*1e9, ls.Site.CPUPerByteBusy*1e9, ls.Site.CPUPerMessage,
			ls.WAN.CPUPerByte*1e9, ls.WAN.CPUPerByteBusy*1e9, ls.WAN.CPUPerMessage)
		if ls.ReducePerByte != 0 {
			fmt.Fprintf(w, "# CPU a byte reduced: %.3g ns\n", ls.ReducePerByte*1e9)
		}
		if ls.Host.LatencyBusy != 0 || ls.Site.LatencyBusy != 0 || ls.WAN.LatencyBusy != 0 {
			fmt.Fprintf(w, "# latency one way, alone / every pair at once (0: unknown): host %v / %v, site %v / %v, wan %v / %v\n",
				ls.Host.Latency, ls.Host.LatencyBusy, ls.Site.Latency, ls.Site.LatencyBusy, ls.WAN.Latency, ls.WAN.LatencyBusy)
		}
		if ls.Host.LatencyCold != 0 || ls.Site.LatencyCold != 0 || ls.WAN.LatencyCold != 0 {
			fmt.Fprintf(w, "# latency one way, its receiver asleep (0: unknown): host %v, site %v, wan %v\n",
				ls.Host.LatencyCold, ls.Site.LatencyCold, ls.WAN.LatencyCold)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cpuCol := map[bool]string{true: "\tCPU"}
	fmt.Fprintf(tw, "algorithm%s\tpredicted\n", cpuCol[on])
	for i, pr := range p {
		mark := ""
		if i == 0 {
			mark = "  (chosen)"
			if len(p) > 1 && p[1].Time < pr.Time {
				mark = fmt.Sprintf("  (chosen: within %.0f %% of the next, with the CPU term binding; the links alone rank it first)", cpuTieMargin*100)
			}
		}
		name := pr.Algorithm
		if pr.Channels > 1 {
			name = fmt.Sprintf("%s on %d channels", name, pr.Channels)
		}
		if pr.Chunk > 0 {
			name = fmt.Sprintf("%s (chunks of %d B)", name, pr.Chunk)
		}
		cpu := ""
		if on {
			cpu = "\t" + pr.CPU.Round(time.Microsecond).String()
			if pr.CPUBound {
				cpu += " (binds)"
			}
		}
		fmt.Fprintf(tw, "%s%s\t%v%s\n", name, cpu, pr.Time.Round(100*time.Nanosecond), mark)
	}
	return tw.Flush()
}
