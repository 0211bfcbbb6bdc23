package tune_test

import (
	"fmt"
	"os"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
)

// Two sites of two hosts of two ranks, the assumed link figures (a WAN
// 12.5 times slower than the LAN), a 16 MiB AllReduce.
func ExampleChoose() {
	var ranks []topology.RankInfo
	for r := range 8 {
		ranks = append(ranks, topology.RankInfo{Rank: r, Host: fmt.Sprintf("host%d", r/2),
			Site: fmt.Sprintf("site%d", r/4), LocalRank: r % 2})
	}
	topo, err := topology.New(ranks)
	if err != nil {
		panic(err)
	}
	p, err := tune.Choose(tune.AllReduce, tune.Input{Topology: topo, Bytes: 16 << 20, ChunkBytes: 512 << 10, Links: tune.DefaultLinks()})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Algorithm)
	// Output: hierarchical
}

// A flat LAN of 16 hosts: recursive doubling for a small AllReduce.
func ExampleExplain() {
	var ranks []topology.RankInfo
	for r := range 16 {
		ranks = append(ranks, topology.RankInfo{Rank: r, Host: fmt.Sprintf("host%d", r)})
	}
	topo, err := topology.New(ranks)
	if err != nil {
		panic(err)
	}
	in := tune.Input{Topology: topo, Bytes: 8 << 10, ChunkBytes: 512 << 10, Links: tune.DefaultLinks()}
	if err := tune.Explain(os.Stdout, tune.AllReduce, in); err != nil {
		panic(err)
	}
	// Output:
	// # AllReduce of 8192 B on 16 ranks (16 hosts, 1 sites), chunk 524288 B
	// algorithm           predicted
	// recursive-doubling  126.2µs  (chosen)
	// tree                251.2µs
	// ring                787.3µs
	// hierarchical        787.3µs
}
