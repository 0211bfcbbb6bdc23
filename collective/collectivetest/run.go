// Package collectivetest is the table test every transport runs the
// collectives through: world sizes from 1 to 16 (odd ones included), counts
// from 0 to 65539, every data type and operation, every collective and
// algorithm, each result compared with a naive reference.
package collectivetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// NewWorld builds a connected world of size endpoints, rank i at index i,
// and registers their cleanup with t.
type NewWorld func(t testing.TB, size int) []transport.Endpoint

// Options selects the part of the table to run. The zero value runs it all.
type Options struct {
	Sizes   []int            // world sizes; default {1, 2, 3, 4, 5, 7, 8, 13, 16}
	Counts  []int            // element counts; default {0, 1, 2, 7, 1023, 65539}
	DTypes  []dtype.DataType // default: all
	Ops     []reduce.Op      // default: all
	Timeout time.Duration    // per collective call; default 60 s
	Config  collective.Config
}

// Representative is the part of the table a transport between processes
// runs in its own tests (the full table runs over inproc): every
// collective, algorithm and op, for some world sizes, counts and types;
// with testing.Short, fewer.
func Representative() Options {
	opts := Options{
		Sizes:  []int{1, 2, 3, 5, 8},
		Counts: []int{0, 1, 7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.BFloat16Type, dtype.Int8, dtype.Uint64},
	}
	if testing.Short() {
		opts.Sizes, opts.Counts = []int{1, 3, 4}, []int{0, 7, 1023}
	}
	return opts
}

func (o Options) withDefaults() Options {
	if o.Sizes == nil {
		o.Sizes = []int{1, 2, 3, 4, 5, 7, 8, 13, 16}
	}
	if o.Counts == nil {
		o.Counts = []int{0, 1, 2, 7, 1023, 65539}
	}
	if o.DTypes == nil {
		o.DTypes = dtype.All()
	}
	if o.Ops == nil {
		o.Ops = reduce.Ops()
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Config.ChunkBytes == 0 {
		o.Config.ChunkBytes = collective.ChunkBytesMin // many chunks, wrapping pipelines
	}
	return o
}

// world is one transport world with communicators over it: comms with the
// options' configuration (automatic algorithms), and one set per entry of
// algoSets with those algorithms forced.
type world struct {
	comms []*collective.Comm
	sets  [][]*collective.Comm
	opts  Options
}

func newWorld(t testing.TB, nw NewWorld, n int, opts Options) *world {
	eps := nw(t, n)
	w := &world{opts: opts}
	mk := func(id uint64, cfg collective.Config) []*collective.Comm {
		comms := make([]*collective.Comm, n)
		for r, ep := range eps {
			c, err := collective.New(ep, id, cfg)
			if err != nil {
				t.Fatalf("collective.New: %v", err)
			}
			comms[r] = c
		}
		return comms
	}
	w.comms = mk(1, opts.Config)
	for i, s := range algoSets {
		cfg := opts.Config
		cfg.AllReduce, cfg.Broadcast, cfg.Reduce = s.allReduce, s.broadcast, s.reduce
		cfg.ReduceScatter, cfg.AllGather = s.reduceScatter, s.allGather
		cfg.Channels = s.channels
		cfg.BoardSplitBytes = s.boardSplit
		if s.placed {
			cfg.Topology = unevenTopology(n)
		}
		w.sets = append(w.sets, mk(uint64(100+i), cfg))
	}
	return w
}

// runSet runs fn on every rank of comms concurrently; any rank's error
// fails the test, named by what.
func (w *world) runSet(t testing.TB, comms []*collective.Comm, what string, fn func(ctx context.Context, r int, c *collective.Comm) error) {
	t.Helper()
	for r, err := range each(comms, w.opts.Timeout, fn) {
		if err != nil {
			t.Fatalf("%s: rank %d of %d: %v", what, r, len(comms), err)
		}
	}
}

// each runs fn on every rank concurrently and returns the errors by rank.
func each(comms []*collective.Comm, timeout time.Duration, fn func(ctx context.Context, r int, c *collective.Comm) error) []error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			errs[r] = fn(ctx, r, c)
		}()
	}
	wg.Wait()
	return errs
}

// Run runs the whole table over the transport nw builds.
func Run(t *testing.T, nw NewWorld, opts Options) {
	opts = opts.withDefaults()
	for _, n := range opts.Sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			w := newWorld(t, nw, n, opts)
			for _, count := range opts.Counts {
				for _, dt := range opts.DTypes {
					checkReductions(t, w, count, dt, opts.Ops)
					checkMovement(t, w, count, dt)
				}
			}
			checkBarrierAndSplit(t, w)
		})
	}
}
