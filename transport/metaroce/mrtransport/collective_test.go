package mrtransport

import (
	"flag"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// fullTable runs the whole collective table (every size, count, type)
// instead of the representative part.
var fullTable = flag.Bool("metaroce.full", false, "run the full collective table over MetaRoCE")

// tableOptions is the representative part of the collective table, or the
// whole of it with -metaroce.full.
func tableOptions() collectivetest.Options {
	if *fullTable {
		return collectivetest.Options{}
	}
	return collectivetest.Representative()
}

// TestCollectiveTable runs the collectives' table test over MetaRoCE on
// loopback.
func TestCollectiveTable(t *testing.T) {
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		return asTransport(newTestWorld(t, n, Config{}))
	}
	collectivetest.Run(t, newWorld, tableOptions())
}
