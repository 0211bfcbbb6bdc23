package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/topology"
)

// The reduction's CPU. Every rank times the reduction kernel of a float32
// sum (dst = a + b, the collectives' most common) over buffers of
// reduceProbeBytes, about a MetaRoCE chunk (2 MiB: the three buffers are
// beyond a core's L2, as a pipelined AllReduce's chunks are), reduceRuns
// times after one run that touches them (first touches fault pages in,
// which a reduction into a warm buffer does not pay), by its process's
// CPU time; the level figures' sharing gives every rank every rank's
// figure, and the lower median of those measured is the job's
// topology.Links.ReducePerByte. All ranks reduce at once, after a
// barrier, so that no pair's transfer runs beside it. Cost: the barrier
// (an AllReduce of one value), 3 × reduceProbeBytes of memory a rank for
// the run, and (reduceRuns + 1) × reduceProbeBytes reduced (a few ms of
// CPU a rank at a few GB/s).
const (
	reduceProbeBytes = 2 << 20
	reduceRuns       = 8
)

// reduceCPU returns this rank's CPU seconds a byte reduced, 0 where cpu
// is nil or its clock did not move.
func reduceCPU(cpu func() time.Duration) float64 {
	if cpu == nil {
		return 0
	}
	k, err := reduce.Lookup(dtype.Float32, reduce.Sum)
	if err != nil {
		return 0
	}
	dst, a, b := make([]byte, reduceProbeBytes), make([]byte, reduceProbeBytes), make([]byte, reduceProbeBytes)
	k(dst, a, b) // first touches
	start := cpu()
	for range reduceRuns {
		k(dst, dst, b)
	}
	took := (cpu() - start).Seconds()
	if took <= 0 {
		return 0
	}
	return took / float64(reduceRuns*reduceProbeBytes)
}

// runReduce runs this rank's part of the reduction's measure (every rank
// of c together, after a barrier, which every rank joins, whether or not
// it reads its CPU time) and returns its figure (reduceCPU).
func runReduce(ctx context.Context, c *collective.Comm, cpu func() time.Duration) (float64, error) {
	if err := collective.AllReduce(ctx, c, make([]float64, 1), make([]float64, 1), collective.Max); err != nil {
		return 0, fmt.Errorf("probe: the barrier before the reduction's measure: %w", err)
	}
	return reduceCPU(cpu), nil
}

// reducePerByte is the job's figure from every rank's (0: not measured):
// the lower median of those measured, within topology's bound.
func reducePerByte(perRank []float64) float64 {
	return min(lowerMedianMeasured(perRank), topology.MaxCPUPerByte)
}
