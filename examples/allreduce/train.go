package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// job is what every rank and the reference share: the settings, the model
// shape and the dataset (read-only). In a multi-process job each rank would
// build the same dataset from the seed, or read only its shard.
type job struct {
	cfg   config
	model mlp
	data  *dataset
	shard int // training samples per rank: shardSize(samples, ranks)
}

func newJob(cfg config) *job {
	return &job{
		cfg:   cfg,
		model: mlp{in: numFeatures, hidden: cfg.hidden, out: numClasses},
		data:  makeSpiral(cfg.samples, cfg.seed),
		shard: shardSize(cfg.samples, cfg.ranks),
	}
}

// epochOrder is the order in which every rank visits its shard in epoch
// (counted from 1): a permutation of the shard's local positions [0, shard)
// drawn from the seed and the epoch alone, so it is the same on every rank.
func (j *job) epochOrder(epoch int) []int {
	rng := rand.New(rand.NewPCG(j.cfg.seed, streamOrder+uint64(epoch)))
	return rng.Perm(j.shard)
}

// batchIndices appends to dst the dataset positions of one step's batch:
// the local positions order[lo:hi] in each of the shards that start at
// starts, shard by shard. A rank passes its own start; the reference passes
// every rank's, so its batch is the concatenation of the ranks' batches.
func batchIndices(dst, order []int, lo, hi int, starts []int) []int {
	for _, s := range starts {
		for _, p := range order[lo:hi] {
			dst = append(dst, s+p)
		}
	}
	return dst
}

// epochStats is the whole dataset's mean loss and accuracy after an epoch.
type epochStats struct {
	epoch          int // 0: before training
	loss, accuracy float64
}

// rankResult is what one rank's training produced.
type rankResult struct {
	params    []float64
	epochs    []epochStats  // one per epoch, the first before training
	total     time.Duration // wall time of the training loop, evaluations included
	eval      time.Duration // of which in the evaluations (their AllReduces too)
	comm      time.Duration // of which in the training's collective calls
	commCalls int
}

// trainer is one rank's training state.
type trainer struct {
	*job
	comm       *collective.Comm
	params     []float64
	grad       []float64
	ws         *workspace
	result     rankResult
	onEpoch    func(epochStats) // called on each epoch's stats; may be nil
	batchIndex []int            // reused each step
}

// timed runs one collective call of the training (not of an evaluation) and
// adds its wall time to the rank's communication time.
func (t *trainer) timed(call func() error) error {
	start := time.Now()
	err := call()
	t.result.comm += time.Since(start)
	t.result.commCalls++
	return err
}

// trainRank trains on this rank's shard: the initial parameters come from
// rank 0 by Broadcast; each step computes the mean gradient of the local
// batch, averages it over the ranks with one AllReduce, and takes an SGD
// step with it, identically on every rank.
func trainRank(ctx context.Context, j *job, comm *collective.Comm, onEpoch func(epochStats)) (rankResult, error) {
	t := &trainer{job: j, comm: comm, onEpoch: onEpoch, ws: j.model.newWorkspace()}
	start := time.Now()
	t.params = make([]float64, j.model.numParams())
	if comm.Rank() == 0 {
		t.params = j.model.initParams(j.cfg.seed)
	}
	t.grad = make([]float64, len(t.params))
	err := t.timed(func() error { return collective.Broadcast(ctx, comm, t.params, t.params, 0) })
	if err != nil {
		return rankResult{}, fmt.Errorf("broadcast of the initial weights: %w", err)
	}
	if err := t.evaluate(ctx, 0); err != nil {
		return rankResult{}, err
	}
	starts := []int{shardStart(comm.Rank(), j.shard)}
	for epoch := 1; epoch <= j.cfg.epochs; epoch++ {
		order := j.epochOrder(epoch)
		for lo := 0; lo < j.shard; lo += j.cfg.batch {
			hi := min(lo+j.cfg.batch, j.shard)
			t.batchIndex = batchIndices(t.batchIndex[:0], order, lo, hi, starts)
			j.model.gradient(t.params, j.data, t.batchIndex, t.grad, t.ws)
			err := t.timed(func() error { return collective.AllReduce(ctx, comm, t.grad, t.grad, collective.Avg) })
			if err != nil {
				return rankResult{}, fmt.Errorf("epoch %d: gradient AllReduce: %w", epoch, err)
			}
			sgdStep(t.params, t.grad, j.cfg.lr)
		}
		if err := t.evaluate(ctx, epoch); err != nil {
			return rankResult{}, err
		}
	}
	t.result.total = time.Since(start)
	t.result.params = t.params
	return t.result, nil
}

// evaluate measures loss and accuracy on the whole dataset: each rank
// evaluates its evalRange, one AllReduce sums the totals. Its time counts
// as evaluation, not training: the single-process reference does not
// evaluate.
func (t *trainer) evaluate(ctx context.Context, epoch int) error {
	start := time.Now()
	defer func() { t.result.eval += time.Since(start) }()
	lo, hi := evalRange(t.comm.Rank(), t.comm.Size(), t.data.len())
	lossSum, correct := t.model.evaluate(t.params, t.data, lo, hi, t.ws)
	totals := []float64{lossSum, correct}
	if err := collective.AllReduce(ctx, t.comm, totals, totals, collective.Sum); err != nil {
		return fmt.Errorf("epoch %d: evaluation AllReduce: %w", epoch, err)
	}
	n := float64(t.data.len())
	stats := epochStats{epoch: epoch, loss: totals[0] / n, accuracy: totals[1] / n}
	t.result.epochs = append(t.result.epochs, stats)
	if t.onEpoch != nil {
		t.onEpoch(stats)
	}
	return nil
}

// sgdStep moves params against grad by lr times the gradient.
func sgdStep(params, grad []float64, lr float64) {
	for i, g := range grad {
		params[i] -= lr * g
	}
}

// trainReference trains the same model in one process on the concatenation
// of all shards: same initial weights, same epochs, and at each step the
// mean gradient over the union of the batches the ranks use at that step.
// Data-parallel training computes the same update (the average of equal-
// sized batches' means is the mean of their union), so the two differ only
// by floating-point rounding.
func trainReference(j *job) []float64 {
	params := j.model.initParams(j.cfg.seed)
	grad := make([]float64, len(params))
	ws := j.model.newWorkspace()
	starts := make([]int, j.cfg.ranks)
	for r := range starts {
		starts[r] = shardStart(r, j.shard)
	}
	var idx []int
	for epoch := 1; epoch <= j.cfg.epochs; epoch++ {
		order := j.epochOrder(epoch)
		for lo := 0; lo < j.shard; lo += j.cfg.batch {
			hi := min(lo+j.cfg.batch, j.shard)
			idx = batchIndices(idx[:0], order, lo, hi, starts)
			j.model.gradient(params, j.data, idx, grad, ws)
			sgdStep(params, grad, j.cfg.lr)
		}
	}
	return params
}
