package collective

import "fmt"

// Algorithm selects how an operation moves data.
type Algorithm uint8

// Algorithms. AlgoAuto lets the communicator choose by message size.
const (
	AlgoAuto Algorithm = iota
	AlgoRing
	AlgoRecursiveDoubling // AllReduce for small messages: log2(n) rounds
	AlgoChain             // Broadcast/Reduce for large messages: a pipelined chain
	AlgoBinomial          // Broadcast/Reduce for small messages: a binomial tree
	AlgoPairwise          // AllToAll: n-1 rounds of pairwise exchange
	AlgoDissemination     // Barrier
	AlgoDirect            // Gather/Scatter/Send/Recv: straight to or from the peer
	AlgoTree              // AllReduce/Broadcast/Reduce: pipelined double binary tree
	AlgoHierarchical      // AllReduce, ReduceScatter, AllGather, Broadcast: per host, then across hosts and sites
	AlgoBoard             // AllReduce, Broadcast, AllToAll, Barrier on one host: one round on shared-memory boards (board.go)
	numAlgos
)

var algoNames = [numAlgos]string{"auto", "ring", "recursive-doubling", "chain", "binomial", "pairwise", "dissemination", "direct", "tree", "hierarchical", "board"}

func (a Algorithm) String() string {
	if a < numAlgos {
		return algoNames[a]
	}
	return fmt.Sprintf("algo(%d)", uint8(a))
}

// ParseAlgorithm returns the Algorithm named s.
func ParseAlgorithm(s string) (Algorithm, error) {
	for a := AlgoAuto; a < numAlgos; a++ {
		if algoNames[a] == s {
			return a, nil
		}
	}
	return AlgoAuto, fmt.Errorf("collective: unknown algorithm %q", s)
}
