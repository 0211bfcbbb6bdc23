//go:build linux

package shm_test

import (
	"testing"

	"github.com/gocoll/gocoll/transport/transporttest"
)

// allocsPerRank bounds the allocations of one small collective on one rank
// in steady state over shared memory: zero (issue 17), for every call that
// transporttest.CollectiveAllocs makes, the 8-byte ones and the 2 KiB
// AllReduce, 8 KiB Broadcast and AllToAll, 64 KiB AllReduce and
// AllToAll (rendezvous messages) and 256 KiB AllToAll (pairwise, each
// block taken with its header: RecvHead) alike. The trees forced at 64 KiB in 4 KiB
// chunks ("... tree") still allocate their schedule's events on every call
// (about 42 and 30 a rank, in newTreeRun by a memory profile), but no
// longer their shapes (kept by the communicator: 72 and 60 a rank before)
// nor anything on their waits for the first of two trees' receives
// (awaitAny over transport.AnySpinner and Completer: 106 and 68 before,
// with a Done channel per receive the trees looked at before it came).
var allocsPerRank = map[string]int{
	"AllReduce": 0, "AllReduce 2 KiB": 0, "Broadcast": 0, "Broadcast 8 KiB": 0, "AllToAll 8 KiB": 0,
	"AllReduce 64 KiB": 0, "AllToAll 64 KiB": 0, "AllToAll 256 KiB": 0, "AllReduce 64 KiB tree": 48, "Broadcast 64 KiB tree": 36,
	"Reduce": 0, "AllGather": 0, "AllToAll": 0, "Barrier": 0,
}

// TestCollectiveAllocs pins the allocations per small collective call over
// shared memory in steady state at zero (see transporttest.CollectiveAllocs).
func TestCollectiveAllocs(t *testing.T) {
	transporttest.CollectiveAllocs(t, 4, defaultWorld, allocsPerRank)
}
