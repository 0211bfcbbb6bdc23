// Command allreduce is a data-parallel training job in plain Go: ranks that
// are processes, joined by gocoll.Init, train one multi-layer perceptron
// together with package ddp (gradient buckets whose AllReduce overlaps
// backward), then prove they agree with a single-process run.
//
//	go run ./examples/allreduce [-ranks 4] [-epochs 2] [-width 512] [-depth 5] [-samples 512]
//	    [-batch 16] [-lr 0.05] [-bucket-kib 1024] [-bf16] [-transport auto|shm|tcp|metaroce|shm+tcp]
//
// Started by hand, it starts -ranks processes of itself on this host (as
// gocoll bench does, with gocoll run's engine, launcher/job) and shows rank
// 0's output. Started by a launcher, each process is one rank, and the same
// binary runs unchanged under any of them:
//
//	go build -o allreduce ./examples/allreduce
//	gocoll run -np 4 ./allreduce
//	mpirun -np 4 ./allreduce
//	srun -n 4 ./allreduce
//	gocoll run --hostfile hosts.txt ./allreduce
//
// -ranks 1 trains on one rank: the time per step to compare with.
//
// The model: -depth hidden layers of -width tanh units between 32 inputs
// and 10 class scores (softmax cross-entropy); by default 1.07 M float32
// parameters in 6 layers, about 6.4 MFLOP per sample for forward and
// backward, written out by hand over whole batches. The data: -samples
// points with normal inputs, labelled by a random linear teacher with
// noise, drawn from -seed by every rank alike.
//
// Sharding. Rank r trains on samples [r*N/n, (r+1)*N/n): shards differ by
// one sample at most, so some ranks may have one batch more per epoch; the
// others ddp.Model.Join them. Each rank visits its shard in an order drawn
// from the seed, the epoch and the rank.
//
// A step: forward and backward over the rank's batch of -batch samples,
// the gradient summed over them; as backward finishes each layer it hands
// the layer's weights and biases to ddp, whose bucket's AllReduce starts at
// once while backward goes on through the layers below; Wait, which leaves
// the sum over all ranks divided by the ranks' summed batch sizes (the mean
// over the global batch); the same SGD step on every rank.
//
// Output (rank 0): the loss and accuracy over the whole dataset before
// and after each epoch; the time per step and how much of it went to
// forward and backward and to waiting for gradients; the communication
// time per step and the share of it hidden behind backward (ddp.Stats);
// then two checks: (a) every rank's final weights are bitwise identical to
// rank 0's, and (b) they are within a stated tolerance of a single-process
// run on the union of the ranks' batches at each step (relative to the
// largest weight: 1e-4 in float32, the rounding of sums in another order;
// 5e-3 with -bf16, whose gradients keep 8 bits; 2e-4 to 6e-4 seen).
//
// Exit status: 0 if both checks pass; 1 if one fails or the job cannot
// run; 2 for bad flags, reported in one line; 130 after Ctrl-C (or
// SIGTERM), which ends every rank's collectives.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// exitInterrupted is the exit status after Ctrl-C (SIGINT) or SIGTERM, as
// a shell reports a process a SIGINT ended.
const exitInterrupted = 130

// jobTimeout bounds a whole run, so a broken transport ends in an error
// rather than a hang.
const jobTimeout = 10 * time.Minute

func main() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "allreduce: finding this program to start the ranks: %v\n", err)
		os.Exit(1)
	}
	os.Exit(run(os.Args[1:], program{path: exe, args: os.Args[1:]}, os.Stdout, os.Stderr))
}

// program is how to start this program's ranks: the path, the arguments
// and extra environment entries.
type program struct {
	path string
	args []string
	env  []string
}

// run is the command: it parses args; under a launcher it runs this rank;
// else it starts cfg.ranks ranks as processes of self (one rank: in this
// process). It prints to stdout and returns the exit status; errors go to
// stderr in one line.
func run(args []string, self program, stdout, stderr io.Writer) int {
	cfg, set, err := parseConfig(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	if !gocoll.Launched() && cfg.ranks > 1 {
		return spawn(ctx, cfg, self, stdout, stderr) // the job forwards Ctrl-C to the ranks
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM) // Ctrl-C ends the collectives
	defer stop()
	if cfg.ranks == 1 && !gocoll.Launched() {
		return runSingle(ctx, cfg, stdout, stderr)
	}
	return runLaunched(ctx, cfg, set, stdout, stderr)
}

// runLaunched runs this process's rank of a job a launcher started.
func runLaunched(ctx context.Context, cfg config, set map[string]bool, stdout, stderr io.Writer) int {
	world, err := gocoll.Init(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: %v\n", err)
		return 1
	}
	if set["ranks"] && cfg.ranks != world.Size() {
		_ = world.Close()
		fmt.Fprintf(stderr, "allreduce: -ranks %d, but the launcher started %d ranks\n", cfg.ranks, world.Size())
		return 2
	}
	if set["transport"] {
		// The ranks this program starts get its arguments and the
		// transport in GOCOLL_TRANSPORT; under another launcher the
		// variable decides.
		if job, err := launcher.ReadEnv(); err == nil && job.Transport != cfg.transport {
			_ = world.Close()
			fmt.Fprintf(stderr, "allreduce: -transport %s, but the launcher asks for %s: under a launcher set GOCOLL_TRANSPORT\n", cfg.transport, job.Transport)
			return 2
		}
	}
	cfg.ranks = world.Size()
	how := fmt.Sprintf("processes (%s), transport %s", world.Job().Launcher, world.Job().Transport)
	return runWorld(ctx, cfg, world, how, stdout, stderr)
}

// runSingle runs a world of one rank in this process.
func runSingle(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	key, err := store.GenerateJobKey()
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: %v\n", err)
		return 1
	}
	env := append(launcher.Environ(), "GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=127.0.0.1:0",
		"GOCOLL_JOB_KEY="+key.Reveal())
	world, err := gocoll.InitWith(ctx, gocoll.Options{Environ: env})
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: %v\n", err)
		return 1
	}
	return runWorld(ctx, cfg, world, "this process", stdout, stderr)
}

// runWorld trains this rank of world, checks, closes the world and, on
// rank 0, prints the report and compares with the reference.
func runWorld(ctx context.Context, cfg config, world *gocoll.World, how string, stdout, stderr io.Writer) int {
	rank := world.Rank()
	var onEpoch func(epochStats)
	if rank == 0 {
		printHeader(stdout, cfg, how)
		onEpoch = func(s epochStats) {
			fmt.Fprintf(stdout, "epoch %3d  loss %.4f  accuracy %5.1f%%\n", s.epoch, s.loss, 100*s.accuracy)
		}
	}
	res, err := trainRank(ctx, cfg, world.Comm, onEpoch)
	differing := -1
	if err == nil {
		differing, err = gatherAndCompare(ctx, world, flatten(res.params))
	}
	closeErr := world.Close()
	if err != nil && errors.Is(ctx.Err(), context.Canceled) { // Ctrl-C or SIGTERM
		if rank == 0 {
			fmt.Fprintln(stderr, "allreduce: interrupted")
		}
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: rank %d: %v\n", rank, err)
		return 1
	}
	if closeErr != nil {
		fmt.Fprintf(stderr, "allreduce: rank %d: leaving the job: %v\n", rank, closeErr)
		return 1
	}
	if rank != 0 {
		return 0
	}
	ok := printReport(stdout, cfg, res, differing)
	if cfg.check {
		ok = printReference(stdout, cfg, res, trainReference(cfg, cfg.ranks)) && ok
	}
	if !ok {
		return 1
	}
	return 0
}

// gatherAndCompare gathers every rank's parameters at rank 0, which returns
// the lowest rank whose parameters are not bitwise identical to its own (-1:
// none). Other ranks return -1.
func gatherAndCompare(ctx context.Context, world *gocoll.World, params []float32) (int, error) {
	var all []float32
	if world.Rank() == 0 {
		all = make([]float32, world.Size()*len(params))
	}
	if err := collective.Gather(ctx, world.Comm, params, all, 0); err != nil {
		return -1, fmt.Errorf("gathering the final weights: %w", err)
	}
	if world.Rank() != 0 {
		return -1, nil
	}
	return firstDifferingBlock(all, len(params)), nil
}
