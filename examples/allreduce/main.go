// Command allreduce is a data-parallel training job in plain Go: N ranks,
// each a goroutine with its own communicator, train one small neural network
// together with one AllReduce per step, then prove they agree.
//
//	go run ./examples/allreduce [-ranks 4] [-transport metaroce|shm|tcp|inproc] [-epochs 20]
//	    [-hidden 32] [-samples 4000] [-batch 16] [-lr 0.3] [-seed 1]
//
// The model is a two-layer perceptron (2 inputs, -hidden tanh units, 3
// class scores, softmax cross-entropy) whose forward and backward passes
// are written out by hand, with every parameter in one flat slice so that
// the gradient is one buffer. The data is a noisy three-armed spiral of
// -samples points drawn from -seed.
//
// Sharding. Rank r trains on the samples [r*S, (r+1)*S), S = samples/ranks
// rounded down; the samples%ranks left at the end are not trained on (by
// anyone, the reference included) but are evaluated. Equal shards mean
// equal batches on every rank, which the equivalence below needs.
//
// Training. Every rank starts from rank 0's initial weights (Broadcast) and
// visits its shard in the same per-epoch order (drawn from the seed and the
// epoch), -batch samples per step, the last step of an epoch shorter if
// -batch does not divide S. Each step: the mean gradient of the local batch,
// then AllReduce Avg over the ranks, then the same SGD step on every rank.
// Because every rank's batch has the same size, the average of the ranks'
// mean gradients is the mean gradient of the union of their batches: data-
// parallel training is single-process training with the global batch
// (ranks × batch), up to floating-point rounding.
//
// Output. Rank 0 prints the whole dataset's loss and accuracy after each
// epoch (each rank evaluates a part, an AllReduce sums), then the training
// time (evaluations apart, as the reference has none) and the part of it
// spent in collective calls. Last come two checks:
// (a) every rank's final weights are bitwise identical to rank 0's (gathered
// at rank 0 through the communicator), and (b) they are within 1e-5 (max
// abs difference) of a single-process run on the concatenated shards.
//
// Why float64: the weights are compared with a reference computed in a
// different order. In float32 rounding differences of 1e-7 per step can
// grow over hundreds of steps to near the 1e-5 bound; in float64 they stay
// around 1e-15, so check (b) tests the algorithm, not the rounding.
//
// Exit status: 0 if both checks pass; 1 if one fails or the job cannot
// run; 2 for bad flags, reported in one line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// jobTimeout bounds a whole run, so a broken transport ends in an error
// rather than a hang.
const jobTimeout = 10 * time.Minute

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it parses args, trains, prints to stdout and returns
// the exit status. Errors go to stderr in one line.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args)
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
	printHeader(stdout, cfg)
	rep, err := runJob(ctx, cfg, func(s epochStats) {
		fmt.Fprintf(stdout, "epoch %3d  loss %.4f  accuracy %5.1f%%\n", s.epoch, s.loss, 100*s.accuracy)
	})
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: %v\n", err)
		return 1
	}
	printReport(stdout, cfg, rep)
	if !rep.identicalOK() || !rep.referenceOK() {
		return 1
	}
	return 0
}

// printHeader describes the job about to run.
func printHeader(w io.Writer, cfg config) {
	m := mlp{in: numFeatures, hidden: cfg.hidden, out: numClasses}
	shard := shardSize(cfg.samples, cfg.ranks)
	fmt.Fprintf(w, "data-parallel training: %d ranks over %s, MLP %d-%d-%d (%d float64 parameters)\n",
		cfg.ranks, cfg.transport, m.in, m.hidden, m.out, m.numParams())
	fmt.Fprintf(w, "data: %d-point spiral (seed %d), %d per rank, %d not trained on; batch %d per rank (%d global), lr %g, %d epochs\n",
		cfg.samples, cfg.seed, shard, cfg.samples-shard*cfg.ranks, cfg.batch, cfg.batch*cfg.ranks, cfg.lr, cfg.epochs)
}

// printReport prints the timings and the two checks.
func printReport(w io.Writer, cfg config, rep report) {
	r0 := rep.rank0
	train := r0.total - r0.eval
	share := 0.0
	if train > 0 {
		share = 100 * r0.comm.Seconds() / train.Seconds()
	}
	fmt.Fprintf(w, "time on rank 0: training %v, of which %v (%.0f%%) in %d collective calls (waits for slower ranks included); evaluations %v; world setup %v\n",
		train.Round(time.Millisecond), r0.comm.Round(time.Millisecond), share, r0.commCalls,
		r0.eval.Round(time.Millisecond), rep.setup.Round(time.Millisecond))
	fmt.Fprintf(w, "single-process reference (training only, one goroutine): %v\n", rep.reference.Round(time.Millisecond))
	if rep.identicalOK() {
		fmt.Fprintf(w, "check (a): weights bitwise identical on all %d ranks: ok\n", cfg.ranks)
	} else {
		fmt.Fprintf(w, "check (a): weights of rank %d differ from rank 0's: FAILED\n", rep.differingRank)
	}
	verdict := "ok"
	if !rep.referenceOK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "check (b): max |data-parallel - single-process| = %.3g (limit %g): %s\n",
		rep.maxDiff, referenceTolerance, verdict)
}
