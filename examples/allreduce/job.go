package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gocoll/gocoll/collective"
	"golang.org/x/sync/errgroup"
)

// referenceTolerance is the largest max-abs difference between the
// data-parallel and the single-process weights that the check accepts.
// In float64 the two differ by rounding alone, orders of magnitude less.
const referenceTolerance = 1e-5

// commID is the id of the world communicator, equal on every rank.
const commID = 1

// report is the outcome of a job: rank 0's training and both checks.
type report struct {
	rank0 rankResult
	setup time.Duration // building the world of endpoints

	// differingRank is the lowest rank whose final weights are not bitwise
	// identical to rank 0's, or -1 if every rank's are.
	differingRank int
	// maxDiff is the largest |w_data-parallel - w_reference| over all
	// weights (NaN if either side is NaN).
	maxDiff   float64
	reference time.Duration // the single-process training run
}

// identicalOK and referenceOK say whether the two checks passed.
func (r report) identicalOK() bool { return r.differingRank < 0 }
func (r report) referenceOK() bool { return r.maxDiff <= referenceTolerance }

// runJob trains data-parallel over a world of cfg.ranks goroutines, then
// runs the single-process reference and compares. onEpoch sees rank 0's
// stats after each epoch (and before the first); it may be nil. An error
// means the job could not run; failed checks are in the report.
func runJob(ctx context.Context, cfg config, onEpoch func(epochStats)) (report, error) {
	j := newJob(cfg)
	rep := report{differingRank: -1}
	start := time.Now()
	w, err := openWorld(ctx, cfg.transport, cfg.ranks)
	if err != nil {
		return rep, fmt.Errorf("building the %s world: %w", cfg.transport, err)
	}
	defer func() { _ = w.close() }()
	rep.setup = time.Since(start)

	g, gctx := errgroup.WithContext(ctx)
	for rank, ep := range w.endpoints {
		g.Go(func() error {
			comm, err := collective.New(ep, commID, collective.Config{})
			if err != nil {
				return fmt.Errorf("rank %d: %w", rank, err)
			}
			defer func() { _ = comm.Close() }()
			var see func(epochStats)
			if rank == 0 {
				see = onEpoch
			}
			res, err := trainRank(gctx, j, comm, see)
			if err != nil {
				return fmt.Errorf("rank %d: %w", rank, err)
			}
			differing, err := gatherAndCompare(gctx, comm, res.params)
			if err != nil {
				return fmt.Errorf("rank %d: gathering the final weights: %w", rank, err)
			}
			if rank == 0 {
				rep.rank0, rep.differingRank = res, differing
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return rep, err
	}
	start = time.Now()
	ref := trainReference(j)
	rep.reference = time.Since(start)
	rep.maxDiff = maxAbsDiff(rep.rank0.params, ref)
	return rep, nil
}

// gatherAndCompare gathers every rank's params at rank 0, which returns the
// lowest rank whose params are not bitwise identical to its own (-1: none).
// Other ranks return -1.
func gatherAndCompare(ctx context.Context, comm *collective.Comm, params []float64) (int, error) {
	var all []float64
	if comm.Rank() == 0 {
		all = make([]float64, comm.Size()*len(params))
	}
	if err := collective.Gather(ctx, comm, params, all, 0); err != nil {
		return -1, err
	}
	if comm.Rank() != 0 {
		return -1, nil
	}
	return firstDifferingBlock(all, len(params)), nil
}

// firstDifferingBlock cuts all into blocks of n and returns the index of the
// first block whose bits differ from block 0's, or -1 if none does.
func firstDifferingBlock(all []float64, n int) int {
	for b := 1; b*n < len(all); b++ {
		for i, v := range all[b*n : (b+1)*n] {
			if math.Float64bits(v) != math.Float64bits(all[i]) {
				return b
			}
		}
	}
	return -1
}

// maxAbsDiff is max |a[i] - b[i]|, NaN if any difference is NaN, +Inf if
// the lengths differ.
func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if math.IsNaN(d) {
			return d
		}
		worst = max(worst, d)
	}
	return worst
}
