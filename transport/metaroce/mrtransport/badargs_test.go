package mrtransport

import (
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// TestBadArgumentsEveryRankErrs runs the bad-argument table over MetaRoCE
// on loopback, the transport between hosts by default: one rank's bad
// input is an error on every rank, promptly, and the communicator then
// still works.
func TestBadArgumentsEveryRankErrs(t *testing.T) {
	collectivetest.RunBadArguments(t, func(t testing.TB, n int) []transport.Endpoint {
		return asTransport(newTestWorld(t, n, Config{}))
	}, []int{3, 4})
}
