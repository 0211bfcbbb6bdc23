package collective_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// rootedCalls run a small rooted operation with the given root: small, so
// that each pair's first data message would ride with the header and
// nothing moves before the headers are compared.
var rootedCalls = map[string]func(ctx context.Context, c *collective.Comm, root int) error{
	"Broadcast": func(ctx context.Context, c *collective.Comm, root int) error {
		x := make([]float32, 2)
		return collective.Broadcast(ctx, c, x, x, root)
	},
	"Reduce": func(ctx context.Context, c *collective.Comm, root int) error {
		x := make([]float32, 2)
		return collective.Reduce(ctx, c, x, x, collective.Sum, root)
	},
	"Gather": func(ctx context.Context, c *collective.Comm, root int) error {
		return collective.Gather(ctx, c, make([]int32, 1), make([]int32, c.Size()), root)
	},
	"Scatter": func(ctx context.Context, c *collective.Comm, root int) error {
		return collective.Scatter(ctx, c, make([]int32, c.Size()), make([]int32, 1), root)
	},
}

// TestDifferentRootsEveryRankErrs gives the ranks of a rooted operation
// different roots, laid out so that ranks wait on each other: with roots
// r^1 each rank of a pair takes the other for the root and waits for its
// data, which the other, itself waiting, never sends; with roots split by
// halves, each half runs a consistent operation of its own. No data
// message shows the mismatch: only the headers a rank sends and checks
// once it has waited (the stall check of operation.await) do. Every rank
// must return an error naming the mismatch well within the limit (the
// check runs after a millisecond's wait; the limit is for a loaded
// machine), and the communicator must work afterwards.
func TestDifferentRootsEveryRankErrs(t *testing.T) {
	layouts := map[string]func(r, n int) int{
		"pairs":  func(r, n int) int { return min(r^1, n-1) },
		"halves": func(r, n int) int { return r / ((n + 1) / 2) * ((n + 1) / 2) },
	}
	for name, fn := range rootedCalls {
		for layout, root := range layouts {
			for _, n := range []int{4, 5} {
				t.Run(fmt.Sprintf("%s/%s/n=%d", name, layout, n), func(t *testing.T) {
					comms := newComms(t, n, collective.Config{})
					start := time.Now()
					errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
						return fn(ctx, c, root(r, n))
					})
					requireAllFail(t, errs, "mismatch", "root")
					t.Logf("every rank erred after %v", time.Since(start))
					requireHealthy(t, comms)
				})
			}
		}
	}
}
