package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// config is one training job, as set by the command line. Every field has a
// default (see defaultConfig) and a range (see validate).
type config struct {
	ranks     int     // processes to start when no launcher started this one; [1, ranksMax]
	transport string  // GOCOLL_TRANSPORT for the ranks this program starts; "" the launcher's default
	epochs    int     // passes over each shard; [1, epochsMax]
	width     int     // units per hidden layer; [1, widthMax]
	depth     int     // hidden layers; [1, depthMax]
	samples   int     // dataset size; [ranks, samplesMax]
	batch     int     // samples per rank per step; [1, batchMax]
	lr        float64 // SGD learning rate; (0, lrMax]
	seed      uint64  // draws the data, the initial weights and the batch order
	bucketKiB int     // ddp bucket limit (the first bucket: at most 1 MiB); [1, bucketKiBMax]
	bf16      bool    // gradients travel as bfloat16
	check     bool    // train the single-process reference and compare
}

// Limits of config. They keep a mistyped flag from asking for hours of work
// or gigabytes of memory.
const (
	ranksMax     = 64
	epochsMax    = 10000
	widthMax     = 4096
	depthMax     = 32
	samplesMax   = 1 << 20
	batchMax     = 1 << 16
	lrMax        = 100
	bucketKiBMax = 1 << 20
)

// transportNames are the values -transport takes (launcher's GOCOLL_TRANSPORT).
var transportNames = []string{"auto", "shm", "tcp", "metaroce", "shm+tcp"}

// defaultConfig is the job `go run ./examples/allreduce` runs: 4 ranks, a
// 1.07 M-parameter MLP of 6 layers, a few seconds on a 2-core machine.
func defaultConfig() config {
	return config{
		ranks:     4,
		epochs:    2,
		width:     512,
		depth:     5,
		samples:   512,
		batch:     16,
		lr:        0.05,
		seed:      1,
		bucketKiB: 1024,
		check:     true,
	}
}

// newFlagSet returns the command's flags, writing into c. It prints nothing
// by itself: run reports errors in one line and usage on -h.
func newFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("allreduce", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&c.ranks, "ranks", c.ranks, fmt.Sprintf("ranks to start as processes of this program, when no launcher started it (1 to %d)", ranksMax))
	fs.StringVar(&c.transport, "transport", c.transport, "transport between the ranks this program starts: "+strings.Join(transportNames, "|")+" (default: auto, shared memory on one host; under a launcher set GOCOLL_TRANSPORT)")
	fs.IntVar(&c.epochs, "epochs", c.epochs, "passes over each rank's shard")
	fs.IntVar(&c.width, "width", c.width, "units per hidden layer")
	fs.IntVar(&c.depth, "depth", c.depth, "hidden layers")
	fs.IntVar(&c.samples, "samples", c.samples, "samples in the dataset, cut into one shard per rank")
	fs.IntVar(&c.batch, "batch", c.batch, "mini-batch size per rank (the global batch is the ranks times this)")
	fs.Float64Var(&c.lr, "lr", c.lr, "SGD learning rate")
	fs.Uint64Var(&c.seed, "seed", c.seed, "seed of the dataset, the initial weights and the batch order")
	fs.IntVar(&c.bucketKiB, "bucket-kib", c.bucketKiB, "gradient bucket size in KiB (ddp's default is 25600; smaller buckets start sooner)")
	fs.BoolVar(&c.bf16, "bf16", c.bf16, "send the gradients as bfloat16 (weights stay float32)")
	fs.BoolVar(&c.check, "check", c.check, "train the single-process reference on rank 0 and compare")
	return fs
}

// parseConfig parses the command-line arguments into a valid config. Its
// error (flag.ErrHelp for -h) is one line. set reports which flags the
// command line gave.
func parseConfig(args []string) (c config, set map[string]bool, err error) {
	c = defaultConfig()
	fs := newFlagSet(&c)
	if err := fs.Parse(args); err != nil {
		return c, nil, err
	}
	if fs.NArg() > 0 {
		return c, nil, fmt.Errorf("unexpected argument %q (all settings are flags)", fs.Arg(0))
	}
	set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return c, set, c.validate()
}

// validate reports the first setting out of its range.
func (c config) validate() error {
	ints := []struct {
		name      string
		v, lo, hi int
	}{
		{"ranks", c.ranks, 1, ranksMax},
		{"epochs", c.epochs, 1, epochsMax},
		{"width", c.width, 1, widthMax},
		{"depth", c.depth, 1, depthMax},
		{"samples", c.samples, c.ranks, samplesMax},
		{"batch", c.batch, 1, batchMax},
		{"bucket-kib", c.bucketKiB, 1, bucketKiBMax},
	}
	for _, k := range ints {
		if k.v < k.lo || k.v > k.hi {
			return fmt.Errorf("-%s %d out of range [%d, %d]", k.name, k.v, k.lo, k.hi)
		}
	}
	if !(c.lr > 0 && c.lr <= lrMax) { // false for NaN too
		return fmt.Errorf("-lr %v out of range (0, %v]", c.lr, float64(lrMax))
	}
	if c.transport != "" && !slices.Contains(transportNames, c.transport) {
		return fmt.Errorf("-transport %q unknown (want %s)", c.transport, strings.Join(transportNames, "|"))
	}
	return nil
}

// usage writes the command's synopsis and flags to w.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: allreduce [flags]")
	fmt.Fprintln(w, "Trains an MLP data-parallel (package ddp) on -ranks processes it starts, or on the")
	fmt.Fprintln(w, "ranks gocoll run, mpirun, srun or torchrun started, and checks the result against a")
	fmt.Fprintln(w, "single-process run.")
	c := defaultConfig()
	fs := newFlagSet(&c)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
