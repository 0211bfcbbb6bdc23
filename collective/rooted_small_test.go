package collective_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// TestSmallRootedAlgorithms runs the small Broadcast, Scatter and Gather
// (dissemination) and Reduce (recursive doubling) that the communicator
// picks by itself (direct: a Scatter above Config.SmallBytes in all, a
// Gather above 4064 bytes in all), at
// every root of 1 to 9 ranks, around the inline limit (508 float64 are 4064
// bytes) and at Config.SmallBytes, in and out of place, and checks every
// element and that the flight record names the algorithm that ran.
func TestSmallRootedAlgorithms(t *testing.T) {
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if testing.Short() {
		sizes = []int{1, 2, 3, 5, 8}
	}
	for _, n := range sizes {
		comms := newComms(t, n, collective.Config{})
		for root := range n {
			for _, count := range []int{1, 64, 508, 509, 8192} {
				t.Run(fmt.Sprintf("n=%d/root=%d/count=%d", n, root, count), func(t *testing.T) {
					errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
						return checkSmallRooted(ctx, c, root, count)
					})
					for r, err := range errs {
						require.NoError(t, err, "rank %d", r)
					}
				})
			}
		}
	}
}

// checkSmallRooted runs the Broadcasts and Reduces of count elements with
// root on c and checks their results and algorithms.
func checkSmallRooted(ctx context.Context, c *collective.Comm, root, count int) error {
	n, r := c.Size(), c.Rank()
	val := func(rank, i int) int64 { return int64(rank*1000003 + i*7 + 1) }
	send, recv := make([]int64, count), make([]int64, count)
	for i := range send {
		send[i] = val(r, i)
		recv[i] = -1
	}
	for _, inPlace := range []bool{false, true} {
		buf := recv
		if inPlace || r != root {
			buf = send
		}
		if err := collective.Broadcast(ctx, c, send, buf, root); err != nil {
			return err
		}
		for i, x := range buf {
			if x != val(root, i) {
				return fmt.Errorf("Broadcast (in place %v): element %d is %d, want %d", inPlace, i, x, val(root, i))
			}
		}
		for i := range send { // what the Broadcast overwrote
			send[i], recv[i] = val(r, i), -1
		}
	}
	if err := lastAlgo(c, collective.KindBroadcast, collective.AlgoDissemination); err != nil {
		return err
	}
	for _, inPlace := range []bool{false, true} {
		out := recv
		if inPlace {
			out = send
		}
		if err := collective.Reduce(ctx, c, send, out, collective.Sum, root); err != nil {
			return err
		}
		if r == root {
			for i, x := range out {
				want := int64(0)
				for p := range n {
					want += val(p, i)
				}
				if x != want {
					return fmt.Errorf("Reduce (in place %v): element %d is %d, want %d", inPlace, i, x, want)
				}
			}
		} else if !inPlace && out[0] != -1 {
			return fmt.Errorf("Reduce wrote recv on a rank that is not the root")
		}
		for i := range send {
			send[i], recv[i] = val(r, i), -1
		}
	}
	if err := lastAlgo(c, collective.KindReduce, collective.AlgoRecursiveDoubling); err != nil {
		return err
	}
	all := make([]int64, n*count)
	if r == root {
		for p := range n {
			for i := range count {
				all[p*count+i] = val(p, i)
			}
		}
	}
	for _, inPlace := range []bool{false, true} {
		out := recv
		if inPlace && r == root {
			out = all[root*count : (root+1)*count]
		}
		if err := collective.Scatter(ctx, c, all, out, root); err != nil {
			return err
		}
		for i, x := range out {
			if x != val(r, i) {
				return fmt.Errorf("Scatter (in place %v): element %d is %d, want %d", inPlace, i, x, val(r, i))
			}
		}
		for i := range recv {
			recv[i] = -1
		}
	}
	want := collective.AlgoDissemination
	if n*count*8 > c.Config().SmallBytes {
		want = collective.AlgoDirect
	}
	if err := lastAlgo(c, collective.KindScatter, want); err != nil {
		return err
	}
	for _, inPlace := range []bool{false, true} {
		for i := range all {
			all[i] = -1
		}
		in := send
		if inPlace && r == root {
			in = all[root*count : (root+1)*count]
			copy(in, send)
		}
		if err := collective.Gather(ctx, c, in, all, root); err != nil {
			return err
		}
		if r == root {
			for p := range n {
				for i := range count {
					if x := all[p*count+i]; x != val(p, i) {
						return fmt.Errorf("Gather (in place %v): rank %d's element %d is %d, want %d", inPlace, p, i, x, val(p, i))
					}
				}
			}
		}
	}
	want = collective.AlgoDissemination
	if n*count*8 > 4064 { // one header's inline bytes (inlineBytesMax)
		want = collective.AlgoDirect
	}
	return lastAlgo(c, collective.KindGather, want)
}

// lastAlgo checks that c's latest operation of kind ran algo (from 2
// ranks on: one rank runs no algorithm).
func lastAlgo(c *collective.Comm, kind collective.Kind, algo collective.Algorithm) error {
	if c.Size() == 1 {
		return nil
	}
	recs := c.FlightRecord()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Comm == c.ID() && recs[i].Kind == kind {
			if recs[i].Algo != algo {
				return fmt.Errorf("%v ran %v, want %v", kind, recs[i].Algo, algo)
			}
			return nil
		}
	}
	return fmt.Errorf("no %v in the flight record", kind)
}
