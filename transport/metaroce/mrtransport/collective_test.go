package mrtransport

import (
	"flag"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
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
	opts := collectivetest.Options{
		Sizes:  []int{1, 2, 3, 5, 8},
		Counts: []int{0, 1, 7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.BFloat16Type, dtype.Int8, dtype.Uint64},
	}
	if testing.Short() {
		opts.Sizes, opts.Counts = []int{1, 3, 4}, []int{0, 7, 1023}
	}
	return opts
}

// TestCollectiveTable runs the collectives' table test over MetaRoCE on
// loopback.
func TestCollectiveTable(t *testing.T) {
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		return asTransport(newTestWorld(t, n, Config{}))
	}
	collectivetest.Run(t, newWorld, tableOptions())
}
