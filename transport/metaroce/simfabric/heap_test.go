package simfabric

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHeapMatchesSort checks the heap against sorting by (time, seq), with
// many equal times.
func TestHeapMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var h minHeap[packetEvent]
	var all []packetEvent
	for seq := range uint64(2000) {
		e := packetEvent{at: time.Duration(r.IntN(50)), seq: seq}
		all = append(all, e)
		h.push(e)
		if r.IntN(3) == 0 { // interleave pops with pushes
			got := h.pop()
			slices.SortFunc(all, func(a, b packetEvent) int {
				if a.at != b.at {
					return int(a.at - b.at)
				}
				return int(a.seq) - int(b.seq)
			})
			require.Equal(t, all[0], got)
			all = all[1:]
		}
	}
	for h.len() > 0 {
		slices.SortFunc(all, func(a, b packetEvent) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return int(a.seq) - int(b.seq)
		})
		require.Equal(t, all[0], h.pop())
		all = all[1:]
	}
	require.Empty(t, all)
}
