//go:build linux

package launcher

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// guardedAllocsPerRank bounds the allocations of one collective call on
// one rank in steady state over shared memory behind the guard, with notes
// (as a world's communicator runs): zero, as without the guard
// (transport/shm's TestCollectiveAllocs), but for the trees forced at 64
// KiB, whose per-call schedule allocates there too (about 42 and 30 a
// rank). Their waits for the first of two trees' receives must poll
// through the guard (SpinAny, explainedRequest's Completed and Unwrap):
// where they did not, every receive they looked at made a Done channel,
// 247 and 142 allocations per AllReduce and Broadcast over 4 ranks against
// 168 and 121 without the guard.
var guardedAllocsPerRank = transporttest.ZeroAllocsBut(map[string]int{"AllReduce 64 KiB tree": 48, "Broadcast 64 KiB tree": 33})

// TestGuardedCollectiveAllocs pins the allocations per collective call
// through the guard (see guardedAllocsPerRank and
// transporttest.CollectiveAllocs).
func TestGuardedCollectiveAllocs(t *testing.T) {
	world := func(t *testing.T, n int) []transport.Endpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
		require.NoError(t, err)
		out := make([]transport.Endpoint, n)
		for i, ep := range eps {
			g := newGuardedEndpoint(ep)
			g.notes = &storeNotes{}
			t.Cleanup(func() { _ = g.Close() })
			out[i] = g
		}
		return out
	}
	transporttest.CollectiveAllocs(t, 4, world, guardedAllocsPerRank)
}
