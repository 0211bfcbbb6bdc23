package main

import (
	"flag"
	"fmt"
	"io"
)

// config is one training job, as set by the command line. Every field has a
// default (see defaultConfig) and a range (see validate).
type config struct {
	ranks     int     // ranks, one goroutine and one communicator each; [1, ranksMax]
	transport string  // a name in transports
	epochs    int     // passes over each shard; [1, epochsMax]
	hidden    int     // hidden units of the MLP; [1, hiddenMax]
	samples   int     // dataset size; [ranks, samplesMax]
	batch     int     // samples per rank per step; [1, batchMax]
	lr        float64 // SGD learning rate; (0, lrMax]
	seed      uint64  // draws the data, the initial weights and the batch order
}

// Limits of config. They keep a mistyped flag from asking for hours of work
// or gigabytes of memory.
const (
	ranksMax   = 64
	epochsMax  = 10000
	hiddenMax  = 4096
	samplesMax = 1 << 20
	batchMax   = 1 << 16
	lrMax      = 100
)

// defaultConfig is the job `go run ./examples/allreduce` runs: a few
// seconds at most on a 2-core machine.
func defaultConfig() config {
	return config{
		ranks:     4,
		transport: "metaroce",
		epochs:    20,
		hidden:    32,
		samples:   4000,
		batch:     16,
		lr:        0.3,
		seed:      1,
	}
}

// newFlagSet returns the command's flags, writing into c. It prints nothing
// by itself: run reports errors in one line and usage on -h.
func newFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("allreduce", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&c.ranks, "ranks", c.ranks, fmt.Sprintf("number of ranks, one goroutine each (1 to %d)", ranksMax))
	fs.StringVar(&c.transport, "transport", c.transport, "transport between the ranks: "+transportNames())
	fs.IntVar(&c.epochs, "epochs", c.epochs, "passes over each rank's shard")
	fs.IntVar(&c.hidden, "hidden", c.hidden, "hidden units of the MLP")
	fs.IntVar(&c.samples, "samples", c.samples, "samples in the dataset (at least -ranks; a remainder after dividing by -ranks is not trained on)")
	fs.IntVar(&c.batch, "batch", c.batch, "mini-batch size per rank (the global batch is -ranks times this)")
	fs.Float64Var(&c.lr, "lr", c.lr, "SGD learning rate")
	fs.Uint64Var(&c.seed, "seed", c.seed, "seed of the dataset, the initial weights and the batch order")
	return fs
}

// parseConfig parses the command-line arguments into a valid config. Its
// error (flag.ErrHelp for -h) is one line.
func parseConfig(args []string) (config, error) {
	c := defaultConfig()
	fs := newFlagSet(&c)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (all settings are flags)", fs.Arg(0))
	}
	return c, c.validate()
}

// validate reports the first setting out of its range.
func (c config) validate() error {
	ints := []struct {
		name      string
		v, lo, hi int
	}{
		{"ranks", c.ranks, 1, ranksMax},
		{"epochs", c.epochs, 1, epochsMax},
		{"hidden", c.hidden, 1, hiddenMax},
		{"samples", c.samples, c.ranks, samplesMax},
		{"batch", c.batch, 1, batchMax},
	}
	for _, k := range ints {
		if k.v < k.lo || k.v > k.hi {
			return fmt.Errorf("-%s %d out of range [%d, %d]", k.name, k.v, k.lo, k.hi)
		}
	}
	if !(c.lr > 0 && c.lr <= lrMax) { // false for NaN too
		return fmt.Errorf("-lr %v out of range (0, %v]", c.lr, float64(lrMax))
	}
	if _, ok := transports[c.transport]; !ok {
		return fmt.Errorf("-transport %q unknown (want %s)", c.transport, transportNames())
	}
	return nil
}

// usage writes the command's synopsis and flags to w.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: allreduce [flags]")
	fmt.Fprintln(w, "Trains a small MLP data-parallel on local ranks, one AllReduce per step,")
	fmt.Fprintln(w, "and checks the result against a single-process run.")
	c := defaultConfig()
	fs := newFlagSet(&c)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
