package collective_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// newComms returns n communicators over an in-process world.
func newComms(t *testing.T, n int, cfg collective.Config) []*collective.Comm {
	eps := inprocWorld(t, n)
	comms := make([]*collective.Comm, n)
	for r, ep := range eps {
		c, err := collective.New(ep, 1, cfg)
		require.NoError(t, err)
		comms[r] = c
	}
	return comms
}

// onAll runs fn on every rank and returns the errors, failing the test if
// any rank has not returned within limit.
func onAll(t *testing.T, comms []*collective.Comm, limit time.Duration, fn func(ctx context.Context, r int, c *collective.Comm) error) []error {
	t.Helper()
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for r, c := range comms {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = fn(ctx, r, c) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		buf := make([]byte, 1<<20)
		t.Fatalf("not every rank returned within %v\n%s", limit, buf[:runtime.Stack(buf, true)])
	}
	return errs
}

// requireAllFail checks that every rank failed and that each error says why.
func requireAllFail(t *testing.T, errs []error, words ...string) {
	t.Helper()
	for r, err := range errs {
		require.Error(t, err, "rank %d returned no error", r)
		for _, w := range words {
			require.Contains(t, err.Error(), w, "rank %d", r)
		}
	}
}

// oneOff runs a collective on every rank, with rank odd calling it with
// different arguments; it returns every rank's error.
type call func(ctx context.Context, c *collective.Comm, odd bool) error

var mismatchCalls = map[string]call{
	"AllReduce count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 100
		if odd {
			n = 99
		}
		x := make([]float32, n)
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	},
	"AllReduce op": func(ctx context.Context, c *collective.Comm, odd bool) error {
		op := collective.Sum
		if odd {
			op = collective.Max
		}
		x := make([]float32, 1<<16)
		return collective.AllReduce(ctx, c, x, x, op)
	},
	"AllReduce dtype": func(ctx context.Context, c *collective.Comm, odd bool) error {
		if odd {
			x := make([]int32, 10)
			return collective.AllReduce(ctx, c, x, x, collective.Sum)
		}
		x := make([]float32, 10)
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	},
	"Broadcast root": func(ctx context.Context, c *collective.Comm, odd bool) error {
		root := 0
		if odd {
			root = 1
		}
		x := make([]float64, 5000)
		return collective.Broadcast(ctx, c, x, x, root)
	},
	"Broadcast count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 10
		if odd {
			n = 11
		}
		x := make([]uint8, n)
		return collective.Broadcast(ctx, c, x, x, 0)
	},
	"Reduce count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 1 << 18
		if odd {
			n = 3
		}
		x := make([]int64, n)
		return collective.Reduce(ctx, c, x, x, collective.Sum, 0)
	},
	"AllGather count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 4
		if odd {
			n = 5
		}
		return collective.AllGather(ctx, c, make([]int32, n), make([]int32, n*c.Size()))
	},
	"AllToAll count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 2 * c.Size()
		if odd {
			n = 3 * c.Size()
		}
		return collective.AllToAll(ctx, c, make([]int32, n), make([]int32, n))
	},
	"Scatter count": func(ctx context.Context, c *collective.Comm, odd bool) error {
		n := 2
		if odd {
			n = 1
		}
		return collective.Scatter(ctx, c, make([]int32, n*c.Size()), make([]int32, n), 0)
	},
	"Gather root": func(ctx context.Context, c *collective.Comm, odd bool) error {
		root := c.Size() - 1
		if odd {
			root = 0
		}
		return collective.Gather(ctx, c, make([]int32, 3), make([]int32, 3*c.Size()), root)
	},
	"different operations": func(ctx context.Context, c *collective.Comm, odd bool) error {
		x := make([]float32, 8)
		if odd {
			return collective.Broadcast(ctx, c, x, x, 0)
		}
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	},
}

// TestMismatchEveryRankFails has each rank in turn call with different
// arguments, and checks that every rank returns an error naming a mismatch,
// promptly, and that the communicator works afterwards.
func TestMismatchEveryRankFails(t *testing.T) {
	for name, fn := range mismatchCalls {
		for _, n := range []int{2, 5} {
			comms := newComms(t, n, collective.Config{})
			for odd := 0; odd < n; odd++ {
				t.Run(fmt.Sprintf("%s/n=%d/rank%d", name, n, odd), func(t *testing.T) {
					errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
						return fn(ctx, c, r == odd)
					})
					requireAllFail(t, errs, "mismatch")
					var me *collective.MismatchError
					found := false
					for _, err := range errs {
						found = found || errors.As(err, &me)
					}
					require.True(t, found, "no rank reported a *MismatchError")
					requireHealthy(t, comms)
				})
			}
		}
	}
}

// requireHealthy checks that an AllReduce on every rank still works.
func requireHealthy(t *testing.T, comms []*collective.Comm) {
	t.Helper()
	errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := []int64{int64(r)}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if want := int64(len(comms) * (len(comms) - 1) / 2); x[0] != want {
			return fmt.Errorf("sum %d, want %d", x[0], want)
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d after the failure", r)
	}
}

// TestBadArgumentsOnOneRank checks that an invalid call on one rank is an
// error there and reaches every other rank as an error naming it.
func TestBadArgumentsOnOneRank(t *testing.T) {
	cases := map[string]struct {
		bad  func(ctx context.Context, c *collective.Comm) error
		good func(ctx context.Context, c *collective.Comm) error
		says string
	}{
		"root out of range": {
			bad: func(ctx context.Context, c *collective.Comm) error {
				return collective.Broadcast(ctx, c, make([]int32, 4), make([]int32, 4), c.Size())
			},
			good: func(ctx context.Context, c *collective.Comm) error {
				return collective.Broadcast(ctx, c, make([]int32, 4), make([]int32, 4), 0)
			},
			says: "root",
		},
		"short recv buffer": {
			bad: func(ctx context.Context, c *collective.Comm) error {
				return collective.AllReduce(ctx, c, make([]float32, 64), make([]float32, 63), collective.Sum)
			},
			good: func(ctx context.Context, c *collective.Comm) error {
				return collective.AllReduce(ctx, c, make([]float32, 64), make([]float32, 64), collective.Sum)
			},
			says: "recv buffer",
		},
		"nil recv buffer": {
			bad: func(ctx context.Context, c *collective.Comm) error {
				return collective.AllGather(ctx, c, make([]float32, 4), nil)
			},
			good: func(ctx context.Context, c *collective.Comm) error {
				return collective.AllGather(ctx, c, make([]float32, 4), make([]float32, 4*c.Size()))
			},
			says: "nil",
		},
		"overlapping buffers": {
			bad: func(ctx context.Context, c *collective.Comm) error {
				x := make([]int32, 9)
				return collective.AllReduce(ctx, c, x[:8], x[1:], collective.Sum)
			},
			good: func(ctx context.Context, c *collective.Comm) error {
				x := make([]int32, 8)
				return collective.AllReduce(ctx, c, x, x, collective.Sum)
			},
			says: "overlap",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			comms := newComms(t, 4, collective.Config{})
			errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
				if r == 2 {
					return tc.bad(ctx, c)
				}
				return tc.good(ctx, c)
			})
			requireAllFail(t, errs, tc.says)
			require.Contains(t, errs[0].Error(), "rank 2")
			requireHealthy(t, comms)
		})
	}
}

func TestUseAfterClose(t *testing.T) {
	comms := newComms(t, 2, collective.Config{})
	require.NoError(t, comms[0].Close())
	require.NoError(t, comms[0].Close())
	x := []float32{1}
	err := collective.AllReduce(context.Background(), comms[0], x, x, collective.Sum)
	require.ErrorIs(t, err, collective.ErrClosed)
	require.ErrorIs(t, comms[0].Barrier(context.Background()), collective.ErrClosed)
	require.ErrorIs(t, collective.Send(context.Background(), comms[0], x, 1), collective.ErrClosed)
}

// TestCancelMidOperation cancels one rank's context while it waits for a
// rank that is late: every rank that is waiting returns well before the late
// one arrives, and the late one returns at once when it does.
func TestCancelMidOperation(t *testing.T) {
	const n = 4
	comms := newComms(t, n, collective.Config{})
	late := 3 * time.Second
	start := time.Now()
	returned := make([]time.Duration, n)
	errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		defer func() { returned[r] = time.Since(start) }()
		x := make([]float32, 1<<15)
		switch r {
		case 0:
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
			return collective.AllReduce(ctx, c, x, x, collective.Sum)
		case n - 1:
			time.Sleep(late)
		}
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	})
	requireAllFail(t, errs)
	require.ErrorIs(t, errs[0], context.Canceled)
	for r := 1; r < n-1; r++ {
		require.Less(t, returned[r], late, "rank %d waited for the late rank", r)
		require.True(t, strings.Contains(errs[r].Error(), "rank 0"), "rank %d: %v", r, errs[r])
	}
	requireHealthy(t, comms)
}

// TestDeadlineWhenARankNeverComes checks that a wait for a missing rank ends
// at the context's deadline on every rank that called.
func TestDeadlineWhenARankNeverComes(t *testing.T) {
	comms := newComms(t, 3, collective.Config{})
	errs := onAll(t, comms[:2], 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		x := make([]float32, 8)
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	})
	for r, err := range errs {
		// This rank's own deadline or a neighbour's abort for its deadline,
		// whichever came first.
		require.ErrorContains(t, err, "context deadline exceeded", "rank %d", r)
	}
}

// A call whose context has no deadline ends at Config.Timeout when a peer
// never joins it: the bound waits put on the context (made on the first
// blocking wait) holds.
func TestConfigTimeoutBoundsCallWithoutDeadline(t *testing.T) {
	comms := newComms(t, 2, collective.Config{Timeout: 200 * time.Millisecond})
	start := time.Now()
	x := []float32{1, 2}
	err := collective.AllReduce(context.Background(), comms[0], x, x, collective.Sum) // rank 1 never calls
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 20*time.Second, "the call outlived its timeout by far")
}
