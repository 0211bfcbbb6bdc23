package collectivetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// algoSets are the communicator configurations every reduction runs under:
// the large-message algorithms and the small-message ones, forced.
var algoSets = []struct {
	name                         string
	allReduce, broadcast, reduce collective.Algorithm
}{
	{"ring", collective.AlgoRing, collective.AlgoChain, collective.AlgoChain},
	{"tree", collective.AlgoRecursiveDoubling, collective.AlgoBinomial, collective.AlgoBinomial},
	{"direct", collective.AlgoDirect, collective.AlgoDirect, collective.AlgoChain},
	{"dbtree", collective.AlgoTree, collective.AlgoTree, collective.AlgoTree},
}

// checkReductions runs AllReduce (in and out of place), Reduce and
// ReduceScatter (in and out of place) for every op, under every algorithm
// set, and compares each rank's result with the reference.
func checkReductions(t *testing.T, w *world, count int, dt dtype.DataType, ops []reduce.Op) {
	n := len(w.comms)
	blk := blockCount(count, n)
	for _, op := range ops {
		ref := reference(dt, op, n, count)
		rsRef := reference(dt, op, n, n*blk)
		root := (count + int(op)) % n
		for si, set := range w.sets {
			name := fmt.Sprintf("count=%d/%v/%v/%s", count, dt, op, algoSets[si].name)
			// AllReduce, out of place then in place.
			w.runSet(t, set, name+"/AllReduce", func(ctx context.Context, r int, c *collective.Comm) error {
				in := input(dt, op, r, count)
				out := make([]byte, len(in))
				if err := c.AllReduceBytes(ctx, in, out, dt, op); err != nil {
					return err
				}
				if err := c.AllReduceBytes(ctx, in, in, dt, op); err != nil {
					return err
				}
				return firstErr(compare("out of place", dt, out, ref), compare("in place", dt, in, ref))
			})
			w.runSet(t, set, name+"/Reduce", func(ctx context.Context, r int, c *collective.Comm) error {
				in := input(dt, op, r, count)
				var out []byte
				if r == root {
					out = make([]byte, len(in))
				}
				if err := c.ReduceBytes(ctx, in, out, dt, op, root); err != nil {
					return err
				}
				if r == root {
					return compare(fmt.Sprintf("root %d", root), dt, out, ref)
				}
				return nil
			})
			w.runSet(t, set, name+"/ReduceScatter", func(ctx context.Context, r int, c *collective.Comm) error {
				in := input(dt, op, r, n*blk)
				out := make([]byte, blk*dt.Size())
				if err := c.ReduceScatterBytes(ctx, in, out, dt, op); err != nil {
					return err
				}
				mine := in[r*len(out) : (r+1)*len(out)]
				if err := c.ReduceScatterBytes(ctx, in, mine, dt, op); err != nil {
					return err
				}
				want := rsRef[r*len(out) : (r+1)*len(out)]
				return firstErr(compare("out of place", dt, out, want), compare("in place", dt, mine, want))
			})
		}
	}
}

// blockCount is the per-rank block of the collectives whose buffers are n
// blocks: about count/n, so the total stays near count, but never 0 unless
// count is.
func blockCount(count, n int) int { return (count + n - 1) / n }

// compare reports the first element where got differs from want.
func compare(what string, dt dtype.DataType, got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	s := dt.Size()
	for i := 0; i < len(got)/s; i++ {
		if !bytes.Equal(got[i*s:(i+1)*s], want[i*s:(i+1)*s]) {
			return fmt.Errorf("%s: element %d is %v, want %v", what, i, decode(dt, got, i), decode(dt, want, i))
		}
	}
	return fmt.Errorf("%s: differs", what)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
