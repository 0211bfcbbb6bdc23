//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestCollectiveTable runs the collectives' table test over shared memory
// between ranks in this process: every collective, algorithm and op, for a
// representative part of the world sizes, counts and types (the full table
// runs over inproc).
func TestCollectiveTable(t *testing.T) {
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]transport.Endpoint, n)
		for i, ep := range eps {
			out[i] = ep
			t.Cleanup(func() { _ = ep.Close() })
		}
		return out
	}
	collectivetest.Run(t, newWorld, collectivetest.Representative())
}

// TestBadArgumentsEveryRankErrs runs the bad-argument table over shared
// memory: one rank's bad input is an error on every rank, promptly, and the
// communicator then still works.
func TestBadArgumentsEveryRankErrs(t *testing.T) {
	collectivetest.RunBadArguments(t, func(t testing.TB, n int) []transport.Endpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]transport.Endpoint, n)
		for i, ep := range eps {
			out[i] = ep
			t.Cleanup(func() { _ = ep.Close() })
		}
		return out
	}, []int{3, 4})
}
