package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/ddp"
)

// evalChunk bounds the samples one forward pass of an evaluation takes.
const evalChunk = 64

// epochStats is the whole dataset's mean loss and accuracy after an epoch.
type epochStats struct {
	epoch          int // 0: before training
	loss, accuracy float64
}

// rankResult is what one rank's training produced.
type rankResult struct {
	params  []ddp.Param
	steps   int           // synchronising steps, Join's included
	train   time.Duration // wall time of the training loops, evaluations excluded
	compute time.Duration // of which in forward and backward
	stats   ddp.Stats
	buckets int
	epochs  []epochStats // one per epoch, the first before training
}

// trainer is one rank's training state.
type trainer struct {
	cfg    config
	model  mlp
	data   *dataset
	comm   *collective.Comm
	ddp    *ddp.Model
	ws     *workspace
	x      []float32 // the step's batch, reused
	y      []int
	result rankResult
}

// ddpConfig is the ddp configuration of cfg.
func ddpConfig(cfg config) ddp.Config {
	bucket := cfg.bucketKiB << 10
	return ddp.Config{BucketBytes: bucket, FirstBucketBytes: min(bucket, ddp.DefaultFirstBucketBytes), BF16: cfg.bf16}
}

// trainRank trains on this rank's shard. Each rank draws its own initial
// weights; ddp.New replaces them by rank 0's. Each step: forward and
// backward over the local batch (gradients summed over its samples, each
// layer's handed to ddp as soon as backward has it, so its bucket's
// AllReduce overlaps the layers below), Wait, which leaves the mean over
// every rank's samples (the weight of a rank is its batch size), and the
// same SGD step on every rank. A rank out of batches for the epoch Joins
// until every rank is. onEpoch sees each epoch's stats; it may be nil.
func trainRank(ctx context.Context, cfg config, comm *collective.Comm, onEpoch func(epochStats)) (rankResult, error) {
	t := &trainer{cfg: cfg, model: newMLP(cfg), data: makeData(cfg.samples, cfg.seed), comm: comm}
	t.ws = t.model.newWorkspace()
	params := t.model.initParams(cfg.seed + uint64(comm.Rank()))
	var err error
	t.ddp, err = ddp.New(ctx, comm, params, ddpConfig(cfg))
	if err != nil {
		return rankResult{}, err
	}
	t.result.params = params
	t.result.buckets = len(t.ddp.Buckets())
	if err := t.evaluate(ctx, 0, onEpoch); err != nil {
		return rankResult{}, err
	}
	sgd := func() error {
		t.result.steps++
		sgdStep(params, t.ddp.Grad, cfg.lr)
		return nil
	}
	for epoch := 1; epoch <= cfg.epochs; epoch++ {
		start := time.Now()
		plan := epochPlan(cfg.seed, epoch, comm.Size(), cfg.samples, cfg.batch)
		for _, idx := range plan[comm.Rank()] {
			if err := t.step(ctx, idx); err != nil {
				return rankResult{}, fmt.Errorf("epoch %d: %w", epoch, err)
			}
			_ = sgd()
		}
		if err := t.ddp.Join(ctx, sgd); err != nil {
			return rankResult{}, fmt.Errorf("epoch %d: joining the ranks with more batches: %w", epoch, err)
		}
		t.result.train += time.Since(start)
		if err := t.evaluate(ctx, epoch, onEpoch); err != nil {
			return rankResult{}, err
		}
	}
	t.result.stats = t.ddp.Stats()
	return t.result, nil
}

// step computes the batch idx's gradient and its average over the ranks.
func (t *trainer) step(ctx context.Context, idx []int) error {
	start := time.Now()
	t.x, t.y = t.data.gather(idx, t.x, t.y)
	t.ddp.ZeroGrad()
	if err := t.ddp.SetWeight(float64(len(idx))); err != nil {
		return err
	}
	t.model.forward(t.ddp.Params(), t.x, t.y, t.ws)
	err := t.model.backward(t.ddp.Params(), t.y, t.ddp.Grad, func(i int) error { return t.ddp.Ready(ctx, i) }, t.ws)
	t.result.compute += time.Since(start)
	if err != nil {
		return err
	}
	return t.ddp.Wait(ctx)
}

// evaluate measures loss and accuracy on the whole dataset: each rank
// evaluates its shard, one AllReduce sums the totals.
func (t *trainer) evaluate(ctx context.Context, epoch int, onEpoch func(epochStats)) error {
	lo, hi := shard(t.comm.Rank(), t.comm.Size(), t.data.len())
	totals := []float64{0, 0}
	idx := make([]int, 0, evalChunk)
	for s := lo; s < hi; s += evalChunk {
		idx = idx[:0]
		for i := s; i < min(s+evalChunk, hi); i++ {
			idx = append(idx, i)
		}
		t.x, t.y = t.data.gather(idx, t.x, t.y)
		loss, correct := t.model.forward(t.ddp.Params(), t.x, t.y, t.ws)
		totals[0] += loss
		totals[1] += float64(correct)
	}
	if err := collective.AllReduce(ctx, t.comm, totals, totals, collective.Sum); err != nil {
		return fmt.Errorf("epoch %d: evaluation AllReduce: %w", epoch, err)
	}
	n := float64(t.data.len())
	stats := epochStats{epoch: epoch, loss: totals[0] / n, accuracy: totals[1] / n}
	t.result.epochs = append(t.result.epochs, stats)
	if onEpoch != nil {
		onEpoch(stats)
	}
	return nil
}

// sgdStep moves each parameter against its gradient by lr.
func sgdStep(params []ddp.Param, grad func(int) []float32, lr float64) {
	rate := float32(lr)
	for i, p := range params {
		for k, g := range grad(i) {
			p.Data[k] -= rate * g
		}
	}
}

// reference is the single-process run check (b) compares with.
type reference struct {
	params []ddp.Param
	steps  int
	train  time.Duration
}

// trainReference trains the same model in one process, from rank 0's
// initial weights, on the same steps: at each, the mean gradient over the
// union of the batches the ranks had at that step. Data-parallel training
// computes the same update (the weighted mean of the ranks' sums is the
// mean over the union), so the two differ by floating-point rounding alone.
func trainReference(cfg config, ranks int) reference {
	model := newMLP(cfg)
	data := makeData(cfg.samples, cfg.seed)
	ws := model.newWorkspace()
	ref := reference{params: model.initParams(cfg.seed)}
	grads := make([][]float32, len(ref.params))
	for i, p := range ref.params {
		grads[i] = make([]float32, len(p.Data))
	}
	grad := func(i int) []float32 { return grads[i] }
	noReady := func(int) error { return nil }
	var x []float32
	var y, idx []int
	start := time.Now()
	for epoch := 1; epoch <= cfg.epochs; epoch++ {
		plan := epochPlan(cfg.seed, epoch, ranks, cfg.samples, cfg.batch)
		for s := 0; ; s++ {
			idx = idx[:0]
			for r := range ranks {
				if s < len(plan[r]) {
					idx = append(idx, plan[r][s]...)
				}
			}
			if len(idx) == 0 {
				break
			}
			x, y = data.gather(idx, x, y)
			for _, g := range grads {
				clear(g)
			}
			model.forward(ref.params, x, y, ws)
			_ = model.backward(ref.params, y, grad, noReady, ws)
			n := float32(len(idx))
			for _, g := range grads {
				for k := range g {
					g[k] /= n
				}
			}
			sgdStep(ref.params, grad, cfg.lr)
			ref.steps++
		}
	}
	ref.train = time.Since(start)
	return ref
}

// flatten concatenates the parameters' values.
func flatten(ps []ddp.Param) []float32 {
	var out []float32
	for _, p := range ps {
		out = append(out, p.Data...)
	}
	return out
}

// relativeDiff is max |a[i] - b[i]| / max |b[i]|: NaN if any value is, +Inf
// if the lengths differ.
func relativeDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst, scale := 0.0, 0.0
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) {
			return d
		}
		worst = max(worst, d)
		scale = max(scale, math.Abs(float64(b[i])))
	}
	if scale == 0 {
		return worst
	}
	return worst / scale
}

// firstDifferingBlock cuts all into blocks of n and returns the index of the
// first block whose bits differ from block 0's, or -1 if none does.
func firstDifferingBlock(all []float32, n int) int {
	for b := 1; b*n < len(all); b++ {
		for i, v := range all[b*n : (b+1)*n] {
			if math.Float32bits(v) != math.Float32bits(all[i]) {
				return b
			}
		}
	}
	return -1
}
