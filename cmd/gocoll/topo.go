package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gocoll/gocoll/bench"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/topology"
)

const topoUsage = `usage: gocoll topo --explain SIZE [--topology FILE] [--coll allreduce|broadcast|reduce|all]
                   [--chunk C] [--channels N] [--root 0] [--probe] [--no-cpu]
       gocoll topo --dump [--topology FILE] [--probe]

--explain SIZE prints, for each collective, every candidate algorithm with
the cost model's predicted time (collective/tune) and the one it chooses. The
topology is FILE's (version 1 or 2; a version 2 file's link figures win over
the assumed ones, tune.DefaultLinks), or, under gocoll run (or mpirun, srun,
torchrun), the job's: every rank joins the job, rank 0 prints.
It prices what a job's automatic choice prices: SIZE rounded down to its top
4 significant bits (collective.PricedBytes; a line says so where that is not
SIZE) in chunks of C, by default the job's chunk (collective.Config.ChunkBytes,
its transport's preference: 2 MiB over MetaRoCE) in a job, else 512K, and
with the ring AllReduce's and the trees' channels N, by default the job's
(collective.Config.Channels: GOCOLL_CHANNELS) in a job, else 0 (the model
chooses among 1, 2, 4, 8 and 16, as a job without GOCOLL_CHANNELS does);
with a file from a job (--dump, GOCOLL_TOPO_DUMP), give --chunk the job's
(its INIT line "chunk=") and --channels its GOCOLL_CHANNELS if it set one.
--dump writes the topology with the link figures the model uses as a
version 2 topology file, which --topology, gocoll sim --topology and a
job's GOCOLL_TOPO_FILE read (any program of a job writes the same with
GOCOLL_TOPO_DUMP=FILE).
In a job, the figures are the job's: GOCOLL_TOPO_FILE's, or measured as the
job forms where it spans hosts (collective/tune/probe: ping-pongs and bulk
transfers between one pair of ranks per level, and ping-pongs answered a
millisecond late, which give the cold latency (latency_cold: the
hierarchical AllReduce's all-gathers, whose receivers have slept through
the top level, are priced at it), then a few small round
trips and one bulk transfer on every pair of the level at once, which give
the busy latency (latency_busy) and CPU a byte (cpu_per_byte_busy), and
every rank's timing of the float32 sum kernel, whose lower median is the
CPU a byte reduced (reduce_per_byte), the figures shared so that every
rank has the same;
GOCOLL_PROBE=0 turns it off), or GOCOLL_LINKS' (cached by gocoll run across
restarts), or assumed (tune.DefaultLinks). --probe (in a job only) measures every level the file
does not give, even on one host (GOCOLL_PROBE=1).
Where the figures give the CPU a level's byte and message cost (the probe
measures them; a byte's busy figure counts by how many of a machine's
ranks beyond its cores a phase keeps busy) or a reduced byte's, and the
ranks' machines their cores, the model bounds each
phase by the CPU work of the ranks sharing a machine over its cores
(collective/tune/cpu.go); --explain then prints the machines, the CPU
figures and each candidate's CPU, "(binds)" where it sets a phase's time.
--no-cpu leaves that term out, for comparison.
`

// topoMain is `gocoll topo`; it returns the exit status.
func topoMain(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, topoUsage)
		return 0
	}
	fs := flag.NewFlagSet("gocoll topo", flag.ContinueOnError)
	explain := fs.String("explain", "", "message size")
	dump := fs.Bool("dump", false, "write the topology as a version 2 file")
	file := fs.String("topology", "", "topology file")
	coll := fs.String("coll", "all", "collective")
	chunk := fs.String("chunk", "512K", "chunk size")
	channels := fs.Int("channels", 0, "the ring AllReduce's and the trees' channels (0: the model's)")
	root := fs.Int("root", 0, "Broadcast's and Reduce's root")
	doProbe := fs.Bool("probe", false, "measure the job's links first")
	noCPU := fs.Bool("no-cpu", false, "leave the CPU term out")
	pos, err := parseLabFlags(fs, args)
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gocoll topo: %v (see gocoll topo --help)\n", err)
		return exitUsage
	}
	if err != nil {
		return fail(err)
	}
	if len(pos) > 0 {
		return fail(usagef("unexpected argument %q", pos[0]))
	}
	if (*explain == "") == !*dump {
		return fail(usagef("want --explain SIZE or --dump"))
	}
	in := tune.Input{Root: *root}
	if *explain != "" {
		b, err := bench.ParseSize(*explain)
		if err != nil {
			return fail(err)
		}
		in.Bytes = collective.PricedBytes(int(b))
	}
	chunkSet, channelsSet := false, false
	fs.Visit(func(f *flag.Flag) {
		chunkSet = chunkSet || f.Name == "chunk"
		channelsSet = channelsSet || f.Name == "channels"
	})
	c, err := bench.ParseSize(*chunk)
	if err != nil || c < collective.ChunkBytesMin || c > collective.ChunkBytesMax {
		return fail(usagef("--chunk %q: want a size in [%d, %d]", *chunk, collective.ChunkBytesMin, collective.ChunkBytesMax))
	}
	in.ChunkBytes = int(c)
	if *channels < 0 || *channels > collective.ChannelsMax {
		return fail(usagef("--channels %d: want 0 (the model's) to %d", *channels, collective.ChannelsMax))
	}
	in.Channels = *channels
	colls, err := topoCollectives(*coll)
	if err != nil {
		return fail(err)
	}
	if *doProbe {
		if *file != "" {
			return fail(usagef("--probe measures a job's links: run it under gocoll run, without --topology"))
		}
		environ = append(append([]string(nil), environ...), launcher.EnvProbe+"=1")
	}
	topo, comm, done, err := topoOf(ctx, *file, environ)
	if err != nil {
		fmt.Fprintf(stderr, "gocoll topo: %v\n", err)
		return 1
	}
	defer done()
	if comm != nil && comm.Rank() != 0 {
		return 0
	}
	if comm != nil && !chunkSet {
		in.ChunkBytes = comm.Config().ChunkBytes // the job's, as its choices price it
	}
	if comm != nil && !channelsSet {
		in.Channels = comm.Config().Channels // GOCOLL_CHANNELS, as the job's choices price it (collective/choose.go)
	}
	if *noCPU {
		topo = tune.WithoutCPU(topo)
	}
	in.Topology, in.Links = topo, tune.DefaultLinks().With(topo)
	if *dump {
		if err := launcher.DumpTopology(stdout, topo); err != nil {
			fmt.Fprintf(stderr, "gocoll topo: %v\n", err)
			return 1
		}
		return 0
	}
	if b, _ := bench.ParseSize(*explain); int(b) != in.Bytes {
		fmt.Fprintf(stdout, "# %d B priced as %d B, as a job's automatic choice prices it (its top 4 significant bits)\n", b, in.Bytes)
	}
	for i, cl := range colls {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := tune.Explain(stdout, cl, in); err != nil {
			fmt.Fprintf(stderr, "gocoll topo: %v\n", err)
			return exitUsage
		}
	}
	return 0
}

func topoCollectives(s string) ([]tune.Collective, error) {
	switch strings.ToLower(s) {
	case "all":
		return []tune.Collective{tune.AllReduce, tune.Broadcast, tune.Reduce}, nil
	case "allreduce":
		return []tune.Collective{tune.AllReduce}, nil
	case "broadcast":
		return []tune.Collective{tune.Broadcast}, nil
	case "reduce":
		return []tune.Collective{tune.Reduce}, nil
	}
	return nil, usagef("--coll %q: want allreduce, broadcast, reduce or all", s)
}

// topoOf returns the topology of file, or of the job this process is a
// rank of, with the job's world communicator (nil for a file); done
// leaves the job.
func topoOf(ctx context.Context, file string, environ []string) (topology.Topology, *collective.Comm, func(), error) {
	if file != "" {
		t, err := topology.Load(file)
		return t, nil, func() {}, err
	}
	if _, err := launcher.ParseEnv(launcher.LookupIn(environ)); err != nil {
		return topology.Topology{}, nil, func() {}, fmt.Errorf("no --topology FILE, and not a rank of a job (%v)", err)
	}
	w, err := launcher.Init(ctx, launcher.Options{Environ: environ})
	if err != nil {
		return topology.Topology{}, nil, func() {}, err
	}
	return w.Topology(), w.Comm, func() { _ = w.Close() }, nil
}
