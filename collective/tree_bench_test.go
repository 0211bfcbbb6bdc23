package collective_test

import (
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
)

// BenchmarkAllReduceTreeVsRing compares the double binary tree with the
// ring and recursive doubling over the in-process transport, 8 ranks.
func BenchmarkAllReduceTreeVsRing(b *testing.B) {
	for _, size := range []int{64 << 10, 4 << 20} {
		for _, algo := range []collective.Algorithm{collective.AlgoRing, collective.AlgoTree, collective.AlgoRecursiveDoubling} {
			b.Run(fmt.Sprintf("bytes=%d/%v", size, algo), func(b *testing.B) {
				collectivetest.BenchAllReduceConfig(b, inprocWorld(b, 8), size, collective.Config{AllReduce: algo})
			})
		}
	}
}
