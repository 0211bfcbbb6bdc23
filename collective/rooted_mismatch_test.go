package collective_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// rootedDeviation is one rooted call, run by every rank, that rank odd
// makes with one argument changed.
type rootedDeviation struct {
	name string
	run  func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error
}

var rootedDeviations = []rootedDeviation{
	{"Broadcast count", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		x := make([]float32, count+b2i(odd))
		return collective.Broadcast(ctx, c, x, x, root)
	}},
	{"Broadcast root", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		x := make([]float32, count)
		return collective.Broadcast(ctx, c, x, x, (root+b2i(odd))%c.Size())
	}},
	{"Broadcast dtype", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		if odd {
			x := make([]int32, count)
			return collective.Broadcast(ctx, c, x, x, root)
		}
		x := make([]float32, count)
		return collective.Broadcast(ctx, c, x, x, root)
	}},
	{"Reduce count", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		x := make([]int32, count+b2i(odd))
		return collective.Reduce(ctx, c, x, x, collective.Sum, root)
	}},
	{"Reduce op", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		op := collective.Sum
		if odd {
			op = collective.Max
		}
		x := make([]int32, count)
		return collective.Reduce(ctx, c, x, x, op, root)
	}},
	{"Reduce root", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		x := make([]int32, count)
		return collective.Reduce(ctx, c, x, x, collective.Sum, (root+b2i(odd))%c.Size())
	}},
	{"Scatter count", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		k := count + b2i(odd)
		return collective.Scatter(ctx, c, make([]int32, k*c.Size()), make([]int32, k), root)
	}},
	{"Scatter root", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		return collective.Scatter(ctx, c, make([]int32, count*c.Size()), make([]int32, count), (root+b2i(odd))%c.Size())
	}},
	{"Gather count", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		k := count + b2i(odd)
		return collective.Gather(ctx, c, make([]int32, k), make([]int32, k*c.Size()), root)
	}},
	{"Broadcast vs Reduce", func(ctx context.Context, c *collective.Comm, root, count int, odd bool) error {
		x := make([]int32, count)
		if odd {
			return collective.Reduce(ctx, c, x, x, collective.Sum, root)
		}
		return collective.Broadcast(ctx, c, x, x, root)
	}},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRootedMismatchAnywhere gives one rank, anywhere in the small rooted
// operations' rounds (a leaf far from the root, the root's neighbour, the
// root itself), one argument that differs, at random world sizes, roots
// and counts (inline and not), and checks that every rank errs naming a
// mismatch in that same call, well within the limit, and that the
// communicator works afterwards. Seeded: a failure prints its seed
// (GOCOLL_TEST_SEED reruns it).
func TestRootedMismatchAnywhere(t *testing.T) {
	seed := seedFromEnv(t)
	rng := rand.New(rand.NewPCG(seed, 17))
	trials := 80
	if testing.Short() {
		trials = 20
	}
	for i := range trials {
		n := 2 + rng.IntN(8)
		dev := rootedDeviations[rng.IntN(len(rootedDeviations))]
		root, odd := rng.IntN(n), rng.IntN(n)
		count := []int{1, 2, 100, 200}[rng.IntN(4)]
		name := fmt.Sprintf("%d/%s/n=%d/root=%d/odd=%d/count=%d", i, dev.name, n, root, odd, count)
		t.Run(name, func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("seed %d (GOCOLL_TEST_SEED=%d)", seed, seed)
				}
			}()
			comms := newComms(t, n, collective.Config{})
			errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
				return dev.run(ctx, c, root, count, r == odd)
			})
			requireAllFail(t, errs, "mismatch")
			requireHealthy(t, comms)
		})
	}
}

// seedFromEnv returns GOCOLL_TEST_SEED if set, else a fresh seed.
func seedFromEnv(t *testing.T) uint64 {
	if s := os.Getenv("GOCOLL_TEST_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GOCOLL_TEST_SEED=%q: %v", s, err)
		}
		return seed
	}
	return rand.Uint64()
}
