package collective_test

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
)

// TestEagerRootInProcess runs the eager path's checks (collectivetest.RunEager)
// over the in-process transport.
func TestEagerRootInProcess(t *testing.T) {
	collectivetest.RunEager(t, inprocWorld)
}
