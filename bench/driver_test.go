package bench

import (
	"testing"

	"github.com/gocoll/gocoll/collective"
)

// TestCommConfigForcesAlgo checks that --algo reaches every collective that
// has the algorithm, and no other: --algo direct used to leave AllReduce
// and Broadcast on their automatic choice without a word.
func TestCommConfigForcesAlgo(t *testing.T) {
	A := collective.AlgoAuto
	tests := []struct {
		algo                         collective.Algorithm
		allReduce, broadcast, reduce collective.Algorithm
	}{
		{collective.AlgoAuto, A, A, A},
		{collective.AlgoRing, collective.AlgoRing, A, A},
		{collective.AlgoRecursiveDoubling, collective.AlgoRecursiveDoubling, A, A},
		{collective.AlgoDirect, collective.AlgoDirect, collective.AlgoDirect, A},
		{collective.AlgoChain, A, collective.AlgoChain, collective.AlgoChain},
		{collective.AlgoBinomial, A, collective.AlgoBinomial, collective.AlgoBinomial},
		{collective.AlgoPairwise, A, A, A},
	}
	for _, tc := range tests {
		cfg := commConfig(Options{Algo: tc.algo})
		if cfg.AllReduce != tc.allReduce || cfg.Broadcast != tc.broadcast || cfg.Reduce != tc.reduce {
			t.Errorf("--algo %v: AllReduce %v, Broadcast %v, Reduce %v; want %v, %v, %v",
				tc.algo, cfg.AllReduce, cfg.Broadcast, cfg.Reduce, tc.allReduce, tc.broadcast, tc.reduce)
		}
	}
}
