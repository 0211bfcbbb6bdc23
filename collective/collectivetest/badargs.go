package collectivetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// badCall is one call of the bad-argument table: every rank runs it, the
// rank given bad=true with invalid input (or input that disagrees with
// its peers'), the others with valid input. Rooted calls whose bad input
// is checked only at the root take the bad rank as root.
type badCall struct {
	name string
	run  func(ctx context.Context, c *collective.Comm, bad int) error
}

// badMinSize is the fewest ranks at which a call's input is bad, where
// that is more than one.
var badMinSize = map[string]int{"AllToAll uneven blocks": 2}

// pick returns b on the bad rank, g elsewhere.
func pick[T any](bad bool, g, b T) T {
	if bad {
		return b
	}
	return g
}

// vCounts is an AllToAllV layout of k elements per pair: counts and
// displacements for n ranks.
func vCounts(n, k int) (counts, displs []int) {
	counts, displs = make([]int, n), make([]int, n)
	for p := range counts {
		counts[p], displs[p] = k, p*k
	}
	return counts, displs
}

// badCalls lists, for every collective, Split and point-to-point, each
// argument check a rank can fail alone.
var badCalls = []badCall{
	{"AllReduce short recv", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.AllReduce(ctx, c, make([]float32, 64), make([]float32, pick(bad, 64, 63)), collective.Sum)
	}},
	{"AllReduce overlapping buffers", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]int32, 9)
		return collective.AllReduce(ctx, c, x[:8], pick(bad, x[:8], x[1:]), collective.Sum)
	}},
	{"AllReduce invalid op", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]float64, 16)
		return collective.AllReduce(ctx, c, x, x, pick(bad, collective.Sum, reduce.Op(200)))
	}},
	{"AllReduceBytes invalid type", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]byte, 16)
		return c.AllReduceBytes(ctx, x, x, pick(bad, dtype.Float32, dtype.Invalid), collective.Sum)
	}},
	{"AllReduceBytes partial element", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]byte, pick(bad, 16, 15))
		return c.AllReduceBytes(ctx, x, x, dtype.Float32, collective.Sum)
	}},
	{"AllReduceAsync short recv", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		h := collective.AllReduceAsync(ctx, c, make([]float32, 8), make([]float32, pick(bad, 8, 7)), collective.Max)
		return h.Wait(ctx)
	}},
	{"Broadcast root out of range", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]int32, 4)
		return collective.Broadcast(ctx, c, x, x, pick(bad, 0, c.Size()))
	}},
	{"Broadcast negative root", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]int32, 1<<15)
		return collective.Broadcast(ctx, c, x, x, pick(bad, 0, -1))
	}},
	{"Broadcast short send at root", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Broadcast(ctx, c, make([]int32, pick(bad, 8, 7)), make([]int32, 8), b)
	}},
	{"Reduce short recv", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Reduce(ctx, c, make([]int64, 8), make([]int64, pick(bad, 8, 3)), collective.Sum, b)
	}},
	{"Reduce root out of range", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		x := make([]int64, 8)
		return collective.Reduce(ctx, c, x, x, collective.Sum, pick(bad, 0, 99))
	}},
	{"AllGather nil recv", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.AllGather(ctx, c, make([]float32, 4), pick(bad, make([]float32, 4*c.Size()), nil))
	}},
	{"ReduceScatter short send", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.ReduceScatter(ctx, c, make([]float32, pick(bad, 4*c.Size(), 4*c.Size()-1)), make([]float32, 4), collective.Sum)
	}},
	{"AllToAll same buffer", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		s, r := make([]int32, 2*c.Size()), make([]int32, 2*c.Size())
		return collective.AllToAll(ctx, c, s, pick(bad, r, s))
	}},
	{"AllToAll uneven blocks", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		n := pick(bad, 2*c.Size(), 2*c.Size()+1)
		return collective.AllToAll(ctx, c, make([]int32, n), make([]int32, n))
	}},
	{"AllToAllV short counts", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		n := c.Size()
		counts, displs := vCounts(n, 2)
		sc := pick(bad, counts, counts[:n-1])
		return collective.AllToAllV(ctx, c, make([]int32, 2*n), sc, displs, make([]int32, 2*n), counts, displs)
	}},
	{"AllToAllV block outside buffer", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		n := c.Size()
		counts, displs := vCounts(n, 2)
		return collective.AllToAllV(ctx, c, make([]int32, 2*n), counts, displs, make([]int32, pick(bad, 2*n, 2*n-1)), counts, displs)
	}},
	{"AllToAllV own block disagrees", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		n := c.Size()
		counts, displs := vCounts(n, 2)
		rc := counts
		if bad {
			rc = append([]int(nil), counts...)
			rc[c.Rank()] = 1
		}
		return collective.AllToAllV(ctx, c, make([]int32, 2*n), counts, displs, make([]int32, 2*n), rc, displs)
	}},
	{"AllToAllV pair disagrees", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		// The bad rank sends its next rank one element more than that
		// rank expects: only those two can see it.
		n := c.Size()
		counts, displs := vCounts(n, 2)
		sc := counts
		if bad {
			sc = append([]int(nil), counts...)
			sc[(c.Rank()+1)%n] = 3
		}
		return collective.AllToAllV(ctx, c, make([]int32, 3*n), sc, displs, make([]int32, 3*n), counts, displs)
	}},
	{"Gather short recv at root", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Gather(ctx, c, make([]int32, 3), make([]int32, pick(bad, 3*c.Size(), 3*c.Size()-1)), b)
	}},
	{"Gather root out of range", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Gather(ctx, c, make([]int32, 3), make([]int32, 3*c.Size()), pick(bad, 0, -3))
	}},
	{"Scatter short send at root", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Scatter(ctx, c, make([]int32, pick(bad, 3*c.Size(), 3*c.Size()+1)), make([]int32, 3), b)
	}},
	{"Scatter root out of range", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		return collective.Scatter(ctx, c, make([]int32, 3*c.Size()), make([]int32, 3), pick(bad, 0, c.Size()))
	}},
	{"Split negative color", func(ctx context.Context, c *collective.Comm, b int) error {
		bad := c.Rank() == b
		sub, err := c.Split(ctx, pick(bad, 0, -5), c.Rank())
		if err == nil && sub == nil {
			return errors.New("Split returned neither a communicator nor an error")
		}
		return err
	}},
}

// RunBadArguments runs, at each world size, every call of the
// bad-argument table with each rank in turn given the bad input (or, for
// the disagreements between a pair, starting it), and checks that every
// rank returns an error, well before the calls' deadline, and that the
// communicator then still runs an AllReduce correctly on every rank.
// Point-to-point calls are checked on the pair they involve.
func RunBadArguments(t *testing.T, nw NewWorld, sizes []int) {
	const deadline = 20 * time.Second // of each call; errors must come well before
	for _, n := range sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			eps := nw(t, n)
			comms := make([]*collective.Comm, n)
			for r, ep := range eps {
				c, err := collective.New(ep, 7, collective.Config{})
				if err != nil {
					t.Fatalf("collective.New: %v", err)
				}
				comms[r] = c
			}
			for _, bc := range badCalls {
				if n < badMinSize[bc.name] {
					continue
				}
				for bad := 0; bad < n; bad++ {
					t.Run(fmt.Sprintf("%s/bad=%d", bc.name, bad), func(t *testing.T) {
						start := time.Now()
						errs := each(comms, deadline, func(ctx context.Context, r int, c *collective.Comm) error {
							return bc.run(ctx, c, bad)
						})
						requirePromptErrors(t, errs, start, deadline)
						requireWorks(t, comms)
					})
				}
			}
			if n >= 2 {
				t.Run("Send partial element", func(t *testing.T) {
					start := time.Now()
					errs := each(comms[:2], deadline, func(ctx context.Context, r int, c *collective.Comm) error {
						if r == 0 {
							return c.SendBytes(ctx, make([]byte, 7), dtype.Float32, 1)
						}
						return c.RecvBytes(ctx, make([]byte, 8), dtype.Float32, 0)
					})
					requirePromptErrors(t, errs, start, deadline)
					requireP2PWorks(t, comms)
					requireWorks(t, comms)
				})
				t.Run("Recv invalid type", func(t *testing.T) {
					start := time.Now()
					errs := each(comms[:2], deadline, func(ctx context.Context, r int, c *collective.Comm) error {
						if r == 0 {
							return c.SendBytes(ctx, make([]byte, 8), dtype.Float32, 1)
						}
						return c.RecvBytes(ctx, make([]byte, 8), dtype.Invalid, 0)
					})
					requirePromptErrors(t, errs, start, deadline)
					requireP2PWorks(t, comms)
					requireWorks(t, comms)
				})
			}
		})
	}
}

// requirePromptErrors checks that every rank failed, and none by waiting
// out its deadline.
func requirePromptErrors(t *testing.T, errs []error, start time.Time, deadline time.Duration) {
	t.Helper()
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d of %d returned no error", r, len(errs))
		} else if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("rank %d of %d waited out its deadline: %v", r, len(errs), err)
		}
	}
	if took := time.Since(start); took > deadline/2 {
		t.Errorf("the ranks took %v to fail", took)
	}
}

// requireWorks checks that an AllReduce still gives the right sum on every
// rank.
func requireWorks(t *testing.T, comms []*collective.Comm) {
	t.Helper()
	n := len(comms)
	errs := each(comms, time.Minute, func(ctx context.Context, r int, c *collective.Comm) error {
		x := []int64{int64(r + 1), int64(-r)}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if want := int64(n * (n + 1) / 2); x[0] != want || x[1] != int64(n)-want {
			return fmt.Errorf("sum %v, want [%d %d]", x, want, int64(n)-want)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("after the failure, AllReduce on rank %d of %d: %v", r, n, err)
		}
	}
}

// requireP2PWorks checks that ranks 0 and 1 still pair their Sends and
// Recvs.
func requireP2PWorks(t *testing.T, comms []*collective.Comm) {
	t.Helper()
	errs := each(comms[:2], time.Minute, func(ctx context.Context, r int, c *collective.Comm) error {
		if r == 0 {
			return collective.Send(ctx, c, []float32{1, 2}, 1)
		}
		x := make([]float32, 2)
		if err := collective.Recv(ctx, c, x, 0); err != nil {
			return err
		}
		if x[0] != 1 || x[1] != 2 {
			return fmt.Errorf("received %v, want [1 2]", x)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("after the failure, Send/Recv on rank %d: %v", r, err)
		}
	}
}
