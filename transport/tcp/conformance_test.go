package tcp

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// worldFactory builds local worlds with cfg for the conformance suite.
func worldFactory(cfg Config) transporttest.WorldFactory {
	return func(t *testing.T, size int) []transport.Endpoint {
		eps := newTestWorld(t, size, cfg)
		out := make([]transport.Endpoint, size)
		for i, ep := range eps {
			out[i] = ep
		}
		return out
	}
}

// newTestWorld builds a local world and closes it when t ends.
func newTestWorld(t testing.TB, size int, cfg Config) []*Endpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eps, err := NewLocalWorld(ctx, size, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	})
	return eps
}

func TestConformance(t *testing.T) {
	transporttest.Run(t, worldFactory(Config{}))
}

// TestConformanceStriped runs the suite with several connections per peer,
// small chunks, and a small eager limit and credit, so that rendezvous,
// striping and credit exhaustion are all exercised.
func TestConformanceStriped(t *testing.T) {
	transporttest.Run(t, worldFactory(Config{ConnsPerPeer: 3, ChunkBytes: 64 << 10,
		EagerLimit: 1024, UnexpectedBytesMax: 8 << 10}))
}
