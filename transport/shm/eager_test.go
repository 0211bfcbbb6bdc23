//go:build linux

package shm_test

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// TestEagerRoot runs the eager path's checks of rooted operations
// (collectivetest.RunEager) over shared memory.
func TestEagerRoot(t *testing.T) {
	collectivetest.RunEager(t, func(t testing.TB, n int) []transport.Endpoint { return defaultWorld(t.(*testing.T), n) })
}
