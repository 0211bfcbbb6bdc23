package mrtransport

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// TestEagerRoot runs the eager path's checks of rooted operations
// (collectivetest.RunEager) over MetaRoCE on loopback.
func TestEagerRoot(t *testing.T) {
	collectivetest.RunEager(t, func(t testing.TB, n int) []transport.Endpoint { return asTransport(newTestWorld(t, n, Config{})) })
}
