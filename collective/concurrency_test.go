package collective_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// TestManyOperationsInFlight issues a mix of async collectives on two
// communicators at once on every rank, then waits for them all: each result
// must be exact, so no operation took another's bytes.
func TestManyOperationsInFlight(t *testing.T) {
	const n, ops = 5, 24
	comms := newComms(t, n, collective.Config{ChunkBytes: collective.ChunkBytesMin})
	errs := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		sub, err := c.Split(ctx, 0, r) // a second communicator over the same ranks
		if err != nil {
			return err
		}
		bufs := make([][]int64, ops)
		handles := make([]*collective.Handle, ops)
		for i := range ops {
			comm := c
			if i%2 == 1 {
				comm = sub
			}
			bufs[i] = make([]int64, 1000+i*997) // ring and recursive doubling, many chunks
			for j := range bufs[i] {
				bufs[i][j] = int64(r*i + j)
			}
			if i%3 == 2 {
				handles[i] = collective.BroadcastAsync(ctx, comm, bufs[i], bufs[i], i%n)
			} else {
				handles[i] = collective.AllReduceAsync(ctx, comm, bufs[i], bufs[i], collective.Sum)
			}
		}
		for i := ops - 1; i >= 0; i-- { // wait out of order
			if err := handles[i].Wait(ctx); err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
		}
		for i := range ops {
			for j, v := range bufs[i] {
				want := int64(n*(n-1)/2*i + n*j)
				if i%3 == 2 {
					want = int64((i%n)*i + j)
				}
				if v != want {
					return fmt.Errorf("op %d element %d: %d, want %d", i, j, v, want)
				}
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

// TestDeterministic checks that a float32 AllReduce of data with rounding is
// bitwise identical on every rank and from one run to the next, for each
// algorithm.
func TestDeterministic(t *testing.T) {
	for _, algo := range []collective.Algorithm{collective.AlgoRing, collective.AlgoRecursiveDoubling} {
		t.Run(algo.String(), func(t *testing.T) {
			const n, count = 7, 50001
			var first []uint32
			for run := 0; run < 3; run++ {
				comms := newComms(t, n, collective.Config{ChunkBytes: 8 << 10, AllReduce: algo})
				out := make([][]float32, n)
				errs := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					rng := rand.New(rand.NewPCG(uint64(r), 42))
					x := make([]float32, count)
					for i := range x {
						x[i] = float32(rng.NormFloat64() * 1e3)
					}
					out[r] = x
					return collective.AllReduce(ctx, c, x, x, collective.Sum)
				})
				for r, err := range errs {
					require.NoError(t, err, "rank %d", r)
				}
				bits := make([]uint32, count)
				for i, v := range out[0] {
					bits[i] = math.Float32bits(v)
				}
				for r := 1; r < n; r++ {
					for i, v := range out[r] {
						require.Equal(t, bits[i], math.Float32bits(v), "rank %d element %d differs from rank 0", r, i)
					}
				}
				if first == nil {
					first = bits
				} else {
					require.Equal(t, first, bits, "run %d differs from run 0", run)
				}
			}
		})
	}
}
