package tcp

import (
	"testing"

	"github.com/gocoll/gocoll/transport/transporttest"
)

// allocsPerRank bounds the allocations per 8-byte collective call on one
// rank over TCP in steady state (all ranks' together, divided by their
// number, rounded up). Requests, per-tag lists, the records and small
// bodies of messages that arrive before their receive are reused; what
// remains is the Done channel of each receive that is still pending when
// its operation waits on it (a request that completed first needs none):
// measured 8, 11, 8, 10, 6 and 7 over 4 ranks (44, 65, 44, 94, 63, 66
// before reuse).
var allocsPerRank = map[string]int{
	"AllReduce": 3, "Broadcast": 3, "Reduce": 3, "AllGather": 3, "AllToAll": 3, "Barrier": 3,
}

// TestCollectiveAllocs pins the allocations per small collective call over
// TCP in steady state (see transporttest.CollectiveAllocs).
func TestCollectiveAllocs(t *testing.T) {
	transporttest.CollectiveAllocs(t, 4, worldFactory(Config{}), allocsPerRank)
}
