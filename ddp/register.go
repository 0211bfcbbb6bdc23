package ddp

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/gocoll/gocoll/collective"
)

// summary is what every rank tells the others about its registration
// first: whether it is valid here, the number of parameters and the
// Config, as int64s.
const (
	sumBad = iota
	sumCount
	sumBucketBytes
	sumFirstBytes
	sumBF16
	sumLen
)

// checkRegistration compares this rank's registration with every other
// rank's, in two AllGathers: the summaries, then (if they agree) each
// parameter's length and shape. Every rank decides on the same gathered
// data, so every rank fails or none does. localErr is this rank's own
// finding (a bad Config or parameter), which it reports; the others name it.
func checkRegistration(ctx context.Context, comm *collective.Comm, params []Param, cfg Config, localErr error) error {
	mine := make([]int64, sumLen)
	if localErr != nil {
		mine[sumBad] = 1
	} else {
		mine[sumCount] = int64(len(params))
		mine[sumBucketBytes] = int64(cfg.BucketBytes)
		mine[sumFirstBytes] = int64(cfg.FirstBucketBytes)
		if cfg.BF16 {
			mine[sumBF16] = 1
		}
	}
	n := comm.Size()
	all := make([]int64, n*sumLen)
	if err := collective.AllGather(ctx, comm, mine, all); err != nil {
		return joinErr(localErr, fmt.Errorf("ddp: comparing the ranks' registrations: %w", err))
	}
	for r := range n {
		if all[r*sumLen+sumBad] != 0 {
			if localErr != nil {
				return localErr
			}
			return fmt.Errorf("ddp: rank %d registered invalid parameters or Config (its error says which)", r)
		}
	}
	ref := all[:sumLen]
	for r := 1; r < n; r++ {
		got := all[r*sumLen : (r+1)*sumLen]
		if got[sumCount] != ref[sumCount] {
			return fmt.Errorf("ddp: rank %d registered %d parameters, rank 0 %d: every rank must register the same parameters in the same order",
				r, got[sumCount], ref[sumCount])
		}
		if got[sumBucketBytes] != ref[sumBucketBytes] || got[sumFirstBytes] != ref[sumFirstBytes] || got[sumBF16] != ref[sumBF16] {
			return fmt.Errorf("ddp: rank %d's Config (BucketBytes %d, FirstBucketBytes %d, BF16 %v) differs from rank 0's (%d, %d, %v)",
				r, got[sumBucketBytes], got[sumFirstBytes], got[sumBF16] != 0, ref[sumBucketBytes], ref[sumFirstBytes], ref[sumBF16] != 0)
		}
	}
	return compareShapes(ctx, comm, params)
}

// compareShapes gathers every rank's parameter lengths and shape hashes
// and names the first (rank, parameter) that differs from rank 0's.
func compareShapes(ctx context.Context, comm *collective.Comm, params []Param) error {
	k := len(params)
	mine := make([]int64, 2*k)
	for i, p := range params {
		mine[2*i] = int64(len(p.Data))
		mine[2*i+1] = shapeHash(p)
	}
	all := make([]int64, comm.Size()*2*k)
	if err := collective.AllGather(ctx, comm, mine, all); err != nil {
		return fmt.Errorf("ddp: comparing the ranks' parameter shapes: %w", err)
	}
	for r := 1; r < comm.Size(); r++ {
		for i := range k {
			refLen, refHash := all[2*i], all[2*i+1]
			gotLen, gotHash := all[r*2*k+2*i], all[r*2*k+2*i+1]
			if gotLen == refLen && gotHash == refHash {
				continue
			}
			what := fmt.Sprintf("%d elements on rank %d, %d on rank 0", gotLen, r, refLen)
			if gotLen == refLen {
				what = fmt.Sprintf("the same %d elements but another shape on rank %d than on rank 0", gotLen, r)
			}
			return fmt.Errorf("ddp: parameter %d (%s on rank %d, shape %v) differs between the ranks: %s; every rank must register the same shapes in the same order",
				i, params[i].Name, comm.Rank(), shapeOf(params[i]), what)
		}
	}
	return nil
}

// shapeOf is p's shape, [len(Data)] where Shape is nil.
func shapeOf(p Param) []int {
	if p.Shape == nil {
		return []int{len(p.Data)}
	}
	return p.Shape
}

// shapeHash is a hash of p's dimensions.
func shapeHash(p Param) int64 {
	h := fnv.New64a()
	for _, d := range shapeOf(p) {
		h.Write(strconv.AppendInt(nil, int64(d), 10))
		h.Write([]byte{','})
	}
	return int64(h.Sum64() >> 1)
}

// joinErr prefers the local error, which says what is wrong here.
func joinErr(local, err error) error {
	if local != nil {
		return local
	}
	return err
}
