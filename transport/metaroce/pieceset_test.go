package metaroce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPieceSetMatchesAMap checks the run-length set against a plain map on
// random insertions.
func TestPieceSetMatchesAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var s pieceSet
		ref := map[uint64]bool{}
		span := uint64(1 + round)
		for range 3 * span {
			idx := r.Uint64N(span)
			require.Equal(t, !ref[idx], s.add(idx), "round %d add %d", round, idx)
			ref[idx] = true
			require.Equal(t, uint64(len(ref)), s.n)
		}
		for idx := range span + 2 {
			require.Equal(t, ref[idx], s.has(idx))
		}
		for i := 1; i < len(s.runs); i++ {
			require.Less(t, s.runs[i-1].hi, s.runs[i].lo, "runs must be disjoint and not adjacent")
		}
	}
}

func TestPieceSetInOrderIsOneRun(t *testing.T) {
	var s pieceSet
	for i := range uint64(100000) {
		s.add(i)
	}
	require.Len(t, s.runs, 1)
}
