package mrtransport

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// newTestWorld builds a loopback world with cfg and closes it when t ends.
func newTestWorld(t testing.TB, size int, cfg Config) []*Endpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
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

// linuxOnly skips a test of what only Linux sockets do (udpio.Caps: the
// ICMP error queue, scatter reads, the non-blocking poller).
func linuxOnly(t testing.TB, what string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("%s needs Linux sockets (udpio.Caps)", what)
	}
}

func asTransport(eps []*Endpoint) []transport.Endpoint {
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = ep
	}
	return out
}

func TestConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint {
		return asTransport(newTestWorld(t, size, Config{}))
	})
}

// TestTraits checks that collectives over MetaRoCE are asked to pipeline in
// PreferredChunk pieces.
func TestTraits(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	got := transport.TraitsOf(eps[0])
	require.Equal(t, transport.Traits{ChunkBytes: PreferredChunk}, got)
}
