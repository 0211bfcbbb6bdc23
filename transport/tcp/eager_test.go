package tcp

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// TestEagerRoot runs the eager path's checks of rooted operations
// (collectivetest.RunEager) over TCP.
func TestEagerRoot(t *testing.T) {
	collectivetest.RunEager(t, func(t testing.TB, n int) []transport.Endpoint { return worldFactory(Config{})(t.(*testing.T), n) })
}
