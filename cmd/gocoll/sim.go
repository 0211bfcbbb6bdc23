package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocoll/gocoll/bench"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
)

const simUsage = `usage: gocoll sim [FLAGS] COLLECTIVE SIZE...

Runs gocoll's real collective algorithms, one goroutine per rank, in virtual
time over a simulated fabric (transport/simnet): a port per rank on its host,
a NIC per host, an uplink per site with --wan-paths lanes, each link shared
by the transfers that cross it. Prints the virtual time, algbw, busbw and the
cost model's prediction (collective/tune) beside it. The simulated fabric
costs no CPU: the model here leaves its CPU term out (a file's CPU figures,
which a job's dump carries, are ignored; gocoll topo --explain prices them),
and it opens every transfer at its link's rate: the model leaves out the
round trip a real transport's window takes to open (tune.Input's
IdealTransport; gocoll topo --explain prices it), so the prediction,
sim/model and --algo auto's choice are of the same fabric.

COLLECTIVE is allreduce, broadcast or reduce (root 0); SIZE is bytes, a
multiple of 4 (float32 elements), with K, M or G (powers of 1024): 8 64K 4M.

topology (flags, or --topology FILE; figures the file gives win over the
defaults, flags given explicitly win over both):
  --sites 2 --hosts-per-site 2 --ranks-per-host 2   ranks numbered site by site
  --topology FILE                                   a topology file, version 1 or 2
links (latency one way; bandwidth of one transfer: 10Gbit, 1.25GB/s, 800Mbit, 1e9):
  --host-delay 2us --host-bw 4GB/s                  between ranks of a host
  --lan-delay 25us --lan-bw 1.25GB/s                a host's NIC
  --wan-delay 2ms  --wan-bw 100MB/s --wan-paths 1   a site's uplink: paths of wan-bw each
run:
  --algo auto|all|NAME[,NAME]  auto: the model's choice; all: every algorithm the model knows
  --chunk 512K                 the pipelining chunk (collective.Config.ChunkBytes)
  --channels 0                 channels of the ring AllReduce and of the trees
                               (collective.Config.Channels, 1-16; fewer where the ring has
                               fewer strides or the buffer chunks); 0: the model's choice;
                               a ring or tree on C > 1 shows as ring/C or tree/C
  --payload auto|data|free     data: real bytes, results checked; free: buffers and chunk
                               scaled down, message lengths scaled up, no bytes copied;
                               auto: data when ranks x size <= 256M

example:
  gocoll sim --sites 4 --hosts-per-site 16 --ranks-per-host 8 --wan-delay 5ms --wan-paths 8 allreduce 64M
`

// simDataMaxBytes is the most ranks × size --payload auto runs with data.
const simDataMaxBytes = 256 << 20

// simFlags is gocoll sim's command line.
type simFlags struct {
	sites, hosts, ranks, paths int
	file                       string
	links                      tune.Links
	set                        map[string]bool // flags given explicitly
	algos                      string
	chunk                      int
	channels                   int // Config.Channels
	payload                    string
	coll                       tune.Collective
	sizes                      []int64
}

// simMain is `gocoll sim`; it returns the exit status.
func simMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, simUsage)
		return 0
	}
	f, err := parseSimFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "gocoll sim: %v (see gocoll sim --help)\n", err)
		return exitUsage
	}
	topo, links, err := f.fabric()
	if err != nil {
		fmt.Fprintf(stderr, "gocoll sim: %v\n", err)
		return exitUsage
	}
	if err := runSims(ctx, f, topo, links, stdout); err != nil {
		if ctx.Err() != nil { // Ctrl-C: one line, as gocoll bench
			fmt.Fprintf(stderr, "gocoll sim: interrupted (%v)\n", context.Cause(ctx))
			return bench.ExitInterrupted
		}
		fmt.Fprintf(stderr, "gocoll sim: %v\n", err)
		return 1
	}
	return 0
}

func parseSimFlags(args []string) (simFlags, error) {
	fs := flag.NewFlagSet("gocoll sim", flag.ContinueOnError)
	f := simFlags{links: tune.DefaultLinks(), set: map[string]bool{}}
	fs.IntVar(&f.sites, "sites", 2, "sites")
	fs.IntVar(&f.hosts, "hosts-per-site", 2, "hosts on each site")
	fs.IntVar(&f.ranks, "ranks-per-host", 2, "ranks on each host")
	fs.StringVar(&f.file, "topology", "", "topology file")
	for _, l := range []struct {
		name string
		link *tune.Link
	}{{"host", &f.links.Host}, {"lan", &f.links.Site}, {"wan", &f.links.WAN}} {
		fs.DurationVar(&l.link.Latency, l.name+"-delay", l.link.Latency, "one-way latency")
		fs.Func(l.name+"-bw", "bandwidth of one transfer", func(s string) error {
			bw, err := parseRate(s)
			l.link.Bandwidth = bw
			return err
		})
	}
	fs.IntVar(&f.paths, "wan-paths", 1, "paths of each site's uplink")
	fs.StringVar(&f.algos, "algo", "auto", "algorithms")
	chunk := fs.String("chunk", "512K", "chunk size")
	fs.StringVar(&f.payload, "payload", "auto", "auto, data or free")
	fs.IntVar(&f.channels, "channels", 0, "ring AllReduce's channels (0: the model's choice)")
	pos, err := parseLabFlags(fs, args)
	if err != nil {
		return f, err
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	c, err := bench.ParseSize(*chunk)
	if err != nil || c < collective.ChunkBytesMin || c > collective.ChunkBytesMax {
		return f, usagef("--chunk %q: want a size in [%d, %d]", *chunk, collective.ChunkBytesMin, collective.ChunkBytesMax)
	}
	f.chunk = int(c)
	if f.channels < 0 || f.channels > collective.ChannelsMax {
		return f, usagef("--channels %d: want 0 (the model's choice) to %d", f.channels, collective.ChannelsMax)
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"sites", f.sites}, {"hosts-per-site", f.hosts}, {"ranks-per-host", f.ranks}, {"wan-paths", f.paths}} {
		if v.v < 1 || v.v > 1<<16 {
			return f, usagef("--%s %d: want 1 to %d", v.name, v.v, 1<<16)
		}
	}
	if f.paths > 1 {
		f.links.WAN.Lanes = f.paths
	}
	if f.payload != "auto" && f.payload != "data" && f.payload != "free" {
		return f, usagef("--payload %q: want auto, data or free", f.payload)
	}
	if len(pos) < 2 {
		return f, usagef("want a collective and at least one size")
	}

	colls := map[string]tune.Collective{"allreduce": tune.AllReduce, "broadcast": tune.Broadcast, "reduce": tune.Reduce}
	var ok bool
	if f.coll, ok = colls[strings.ToLower(pos[0])]; !ok {
		return f, usagef("unknown collective %q (want allreduce, broadcast or reduce)", pos[0])
	}
	for _, s := range pos[1:] {
		n, err := bench.ParseSize(s)
		if err != nil {
			return f, usageError{err}
		}
		if n%4 != 0 {
			return f, usagef("size %s is not a multiple of 4 (float32 elements)", s)
		}
		f.sizes = append(f.sizes, n)
	}
	_, err = simForced(f)
	return f, err
}

// parseRate reads a bandwidth in bytes per second: a number, optionally
// with k, M, G or T (powers of 1000) and B (bytes, the default) or bit,
// and an optional "/s" or "ps": 1.25e9, 1.25GB/s, 10Gbit, 800Mbps.
func parseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "/s"), "ps")
	unit := 1.0
	switch {
	case strings.HasSuffix(t, "bit"):
		t, unit = strings.TrimSuffix(t, "bit"), 1.0/8
	case strings.HasSuffix(t, "b"):
		t, unit = strings.TrimSuffix(t, "b"), 1.0/8
	case strings.HasSuffix(t, "B"):
		t = strings.TrimSuffix(t, "B")
	}
	for _, p := range []struct {
		suffix string
		mult   float64
	}{{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}} {
		if strings.HasSuffix(t, p.suffix) {
			t, unit = strings.TrimSuffix(t, p.suffix), unit*p.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || math.IsInf(v*unit, 0) {
		return 0, fmt.Errorf("bandwidth %q: want a positive number such as 10Gbit, 1.25GB/s or 1e9 (bytes/s)", s)
	}
	return v * unit, nil
}

// fabric returns the topology and link figures the flags describe: the
// file's, or the grid's; the file's levels win over the defaults, flags
// given explicitly over both; no CPU figures (the fabric simulates none).
func (f simFlags) fabric() (topology.Topology, tune.Links, error) {
	var topo topology.Topology
	var err error
	if f.file != "" {
		for _, g := range []string{"sites", "hosts-per-site", "ranks-per-host"} {
			if f.set[g] {
				return topo, f.links, usagef("--%s and --topology: give one", g)
			}
		}
		if topo, err = topology.Load(f.file); err != nil {
			return topo, f.links, err
		}
	} else {
		if n := f.sites * f.hosts * f.ranks; n > 1<<20 {
			return topo, f.links, usagef("%d ranks, more than %d", n, 1<<20)
		}
		if topo, err = gridTopology(f.sites, f.hosts, f.ranks); err != nil {
			return topo, f.links, err
		}
	}
	topo = tune.WithoutCPU(topo) // the fabric has no CPU cost: nor has its model
	links := tune.DefaultLinks().With(topo)
	flagged := map[string]func(){
		"host-delay": func() { links.Host.Latency = f.links.Host.Latency }, "host-bw": func() { links.Host.Bandwidth = f.links.Host.Bandwidth },
		"lan-delay": func() { links.Site.Latency = f.links.Site.Latency }, "lan-bw": func() { links.Site.Bandwidth = f.links.Site.Bandwidth },
		"wan-delay": func() { links.WAN.Latency = f.links.WAN.Latency }, "wan-bw": func() { links.WAN.Bandwidth = f.links.WAN.Bandwidth },
		"wan-paths": func() { links.WAN.Lanes = f.links.WAN.Lanes },
	}
	for name, apply := range flagged {
		if f.set[name] {
			apply()
		}
	}
	topo.Links = nil // merged into links, which win
	return topo, links, nil
}

// gridTopology is sites × hosts × ranks, numbered site by site.
func gridTopology(sites, hosts, ranks int) (topology.Topology, error) {
	rs := make([]topology.RankInfo, 0, sites*hosts*ranks)
	for s := range sites {
		for h := range hosts {
			for l := range ranks {
				rs = append(rs, topology.RankInfo{Rank: len(rs), Host: fmt.Sprintf("s%dh%d", s, h), Site: fmt.Sprintf("s%d", s), LocalRank: l})
			}
		}
	}
	return topology.New(rs)
}

// simAlgos resolves --algo for one size: the algorithms to run, each with
// the model's prediction (0 where the model has none), and the channels
// of each (--channels, or the model's choice for the ring AllReduce and
// the trees; 1 for the others). auto is the model's choice at the size a
// job's choice prices (collective.PricedBytes).
func simAlgos(f simFlags, topo topology.Topology, links tune.Links, size int64) ([]string, map[string]time.Duration, map[string]int, error) {
	pred, err := tune.Predict(f.coll, tune.Input{Topology: topo, Bytes: int(size), ChunkBytes: f.chunk, Links: links, Channels: f.channels, IdealTransport: true})
	if err != nil {
		return nil, nil, nil, err
	}
	times, channels := map[string]time.Duration{}, map[string]int{}
	var all []string
	for _, p := range pred {
		times[p.Algorithm] = p.Time
		all = append(all, p.Algorithm)
		channels[p.Algorithm] = max(f.channels, 1) // --channels, even where the model gives none
		if p.Channels > 0 {
			channels[p.Algorithm] = p.Channels
		}
	}
	switch f.algos {
	case "auto": // the job's choice: the model's at the size a job prices
		if priced := collective.PricedBytes(int(size)); priced != int(size) {
			pp, err := tune.Predict(f.coll, tune.Input{Topology: topo, Bytes: priced, ChunkBytes: f.chunk, Links: links, Channels: f.channels, IdealTransport: true})
			if err != nil {
				return nil, nil, nil, err
			}
			return []string{pp[0].Algorithm}, times, channels, nil
		}
		return all[:1], times, channels, nil
	case "all":
		return all, times, channels, nil
	}
	out, err := simForced(f)
	for _, a := range out {
		if _, ok := channels[a]; !ok {
			channels[a] = max(f.channels, 1)
		}
	}
	return out, times, channels, err
}

// simForced returns the algorithms --algo names, unless it is auto or all.
func simForced(f simFlags) ([]string, error) {
	if f.algos == "auto" || f.algos == "all" {
		return nil, nil
	}
	kind := map[tune.Collective]collective.Kind{tune.AllReduce: collective.KindAllReduce, tune.Broadcast: collective.KindBroadcast, tune.Reduce: collective.KindReduce}[f.coll]
	var out []string
	for _, name := range strings.Split(f.algos, ",") {
		a, err := collective.ParseAlgorithm(strings.TrimSpace(name))
		if err != nil || a == collective.AlgoAuto || !containsAlgo(collective.Algorithms(kind), a) {
			return nil, usagef("--algo %q: %v has %v (or auto, all)", name, f.coll, collective.Algorithms(kind))
		}
		out = append(out, a.String())
	}
	return out, nil
}

func containsAlgo(as []collective.Algorithm, a collective.Algorithm) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// runSims runs every size and algorithm and prints a row for each.
func runSims(ctx context.Context, f simFlags, topo topology.Topology, links tune.Links, stdout io.Writer) error {
	n := topo.Size()
	fmt.Fprintf(stdout, "# gocoll sim: %v on %d ranks (%d sites, %d hosts), chunk %d B\n", f.coll, n, len(topo.Sites()), len(topo.Hosts()), f.chunk)
	for _, l := range []struct {
		name string
		link tune.Link
	}{{"host", links.Host}, {"lan", links.Site}, {"wan", links.WAN}} {
		fmt.Fprintf(stdout, "# %-4s %v one way, %.4g GB/s per transfer, %d lane(s)\n", l.name, l.link.Latency, l.link.Bandwidth/1e9, max(1, l.link.Lanes))
	}
	if len(links.Pairs) > 0 {
		fmt.Fprintf(stdout, "# %d links between hosts with figures of their own\n", len(links.Pairs))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "size\talgorithm\tmode\ttime\talgbw GB/s\tbusbw GB/s\tpredicted\tsim/model\twall\t\n")
	for _, size := range f.sizes {
		names, pred, channels, err := simAlgos(f, topo, links, size)
		if err != nil {
			return err
		}
		free := f.payload == "free" || f.payload == "auto" && int64(n)*size > simDataMaxBytes
		for _, name := range names {
			algo, _ := collective.ParseAlgorithm(name)
			res, err := simulate(ctx, simSpec{topo: topo, links: links, coll: f.coll, algo: algo, bytes: size, chunk: f.chunk, channels: channels[name], free: free})
			if err != nil {
				return fmt.Errorf("%s of %d B: %w", name, size, err)
			}
			if ch := channels[name]; ch > 1 && (algo == collective.AlgoRing && f.coll == tune.AllReduce || algo == collective.AlgoTree) {
				name = fmt.Sprintf("%s/%d", name, ch)
			}
			if f.algos == "auto" {
				name = "auto:" + name
			}
			mode := "data"
			if free {
				mode = fmt.Sprintf("free/%d", res.scale)
			}
			algbw := float64(size) / res.time.Seconds() / 1e9
			busbw := algbw
			if f.coll == tune.AllReduce {
				busbw *= 2 * float64(n-1) / float64(n)
			}
			p, ratio := "-", "-"
			if t := pred[algo.String()]; t > 0 {
				p, ratio = fmtDur(t), fmt.Sprintf("%.3f", res.time.Seconds()/t.Seconds())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%.4f\t%s\t%s\t%s\t\n", bench.FormatSize(size), name, mode, fmtDur(res.time), algbw, busbw, p, ratio, res.wall.Round(time.Millisecond))
			if res.wrong > 0 {
				tw.Flush()
				return fmt.Errorf("%s of %d B: %d ranks got a wrong result", name, size, res.wrong)
			}
		}
	}
	return tw.Flush()
}

// fmtDur prints d rounded to a thousandth of its unit (s, ms or µs).
func fmtDur(d time.Duration) string {
	for _, r := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= r {
			return d.Round(r / 1000).String()
		}
	}
	return d.String()
}
