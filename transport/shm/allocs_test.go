//go:build linux

package shm_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// allocsPerRank bounds the allocations of one small collective on one rank
// in steady state over shared memory: zero (issue 17), for every call that
// transporttest.CollectiveAllocs makes, the 8-byte ones and the 2 KiB
// AllReduce, 8 KiB Broadcast and 8 KiB AllToAll alike.
var allocsPerRank = map[string]int{
	"AllReduce": 0, "AllReduce 2 KiB": 0, "Broadcast": 0, "Broadcast 8 KiB": 0, "AllToAll 8 KiB": 0,
	"Reduce": 0, "AllGather": 0, "AllToAll": 0, "Barrier": 0,
}

// TestCollectiveAllocs pins the allocations per small collective call over
// shared memory in steady state at zero (see transporttest.CollectiveAllocs).
func TestCollectiveAllocs(t *testing.T) {
	transporttest.CollectiveAllocs(t, 4, func(t *testing.T, n int) []transport.Endpoint {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		teps := make([]transport.Endpoint, n)
		for i, ep := range eps {
			t.Cleanup(func() { _ = ep.Close() })
			teps[i] = ep
		}
		return teps
	}, allocsPerRank)
}
