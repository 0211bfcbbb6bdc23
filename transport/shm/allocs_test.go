//go:build linux

package shm_test

import (
	"testing"

	"github.com/gocoll/gocoll/transport/transporttest"
)

// allocsPerRank bounds the allocations of one small collective on one rank
// in steady state over shared memory: zero (issue 17), for every call that
// transporttest.CollectiveAllocs makes, the 8-byte ones and the 2 KiB
// AllReduce, 8 KiB Broadcast and AllToAll and 64 KiB AllReduce and
// AllToAll (rendezvous messages) alike.
var allocsPerRank = map[string]int{
	"AllReduce": 0, "AllReduce 2 KiB": 0, "Broadcast": 0, "Broadcast 8 KiB": 0, "AllToAll 8 KiB": 0,
	"AllReduce 64 KiB": 0, "AllToAll 64 KiB": 0,
	"Reduce": 0, "AllGather": 0, "AllToAll": 0, "Barrier": 0,
}

// TestCollectiveAllocs pins the allocations per small collective call over
// shared memory in steady state at zero (see transporttest.CollectiveAllocs).
func TestCollectiveAllocs(t *testing.T) {
	transporttest.CollectiveAllocs(t, 4, defaultWorld, allocsPerRank)
}
