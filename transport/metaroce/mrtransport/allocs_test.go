package mrtransport

import (
	"testing"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// allocsPerRank bounds the allocations per 8-byte collective call on one
// rank over MetaRoCE in steady state (all ranks' together, divided by
// their number, rounded up, with one to spare). Requests are reused and
// their Done channel made only when a wait needs one; what remains is the
// core's per-message state (metaroce: the sender's and receiver's message
// records, piece sets). Measured 44, 66, 44, 93, 65 and 65 over 4 ranks
// (76, 114, 76, 164, 113, 113 before request reuse).
var allocsPerRank = map[string]int{
	"AllReduce": 12, "Broadcast": 18, "Reduce": 12, "AllGather": 25, "AllToAll": 18, "Barrier": 18,
}

// TestCollectiveAllocs pins the allocations per small collective call over
// MetaRoCE in steady state (see transporttest.CollectiveAllocs).
func TestCollectiveAllocs(t *testing.T) {
	transporttest.CollectiveAllocs(t, 4, func(t *testing.T, n int) []transport.Endpoint {
		return asTransport(newTestWorld(t, n, Config{}))
	}, allocsPerRank)
}

// windowRate is summarise's rate, allocation-free: the sampler takes it
// for every path of every connection at each sample.
func TestWindowRate(t *testing.T) {
	w := []pathSample{{BytesAcked: 100}, {BytesAcked: 900, Lost: 1}, {BytesAcked: 1300}}
	if got, want := windowRate(w), summarise(w).rate; got != want || got != 600 {
		t.Errorf("windowRate = %v, summarise's rate %v, want 600", got, want)
	}
	if got := windowRate(w[:1]); got != 0 {
		t.Errorf("windowRate of one sample = %v, want 0", got)
	}
	if a := testing.AllocsPerRun(100, func() { _ = windowRate(w) }); a != 0 {
		t.Errorf("windowRate: %v allocations", a)
	}
}
