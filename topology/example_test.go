package topology_test

import (
	"fmt"

	"github.com/gocoll/gocoll/topology"
)

// Number the slots of a host list site by site, then lay a ring and a
// hierarchical tree over the result.
func ExampleAssignRanks() {
	placements, err := topology.AssignRanks([]topology.HostSlots{
		{Host: "w1", Site: "west", Slots: 2},
		{Host: "e1", Site: "east", Slots: 2},
		{Host: "w2", Site: "west", Slots: 1},
	})
	if err != nil {
		panic(err)
	}
	for _, p := range placements {
		fmt.Printf("rank %d: %s/%s local %d\n", p.Rank, p.Site, p.Host, p.LocalRank)
	}
	// Output:
	// rank 0: west/w1 local 0
	// rank 1: west/w1 local 1
	// rank 2: west/w2 local 0
	// rank 3: east/e1 local 0
	// rank 4: east/e1 local 1
}

// A ring over ranks numbered round robin across sites still crosses between
// the two sites only twice.
func ExampleRingOrder() {
	topo, err := topology.New([]topology.RankInfo{
		{Rank: 0, Host: "w1", Site: "west"},
		{Rank: 1, Host: "e1", Site: "east"},
		{Rank: 2, Host: "w1", Site: "west", LocalRank: 1},
		{Rank: 3, Host: "e1", Site: "east", LocalRank: 1},
	})
	if err != nil {
		panic(err)
	}
	ring, err := topology.RingOrder(topo)
	if err != nil {
		panic(err)
	}
	naive, _ := topology.SiteCrossings(topo, []int{0, 1, 2, 3})
	crossings, _ := topology.SiteCrossings(topo, ring)
	fmt.Println("ring:", ring)
	fmt.Println("site crossings in rank order:", naive, "in ring order:", crossings)
	// Output:
	// ring: [0 2 1 3]
	// site crossings in rank order: 4 in ring order: 2
}

func ExampleHierarchicalTree() {
	placements, _ := topology.AssignRanks([]topology.HostSlots{
		{Host: "w1", Site: "west", Slots: 2},
		{Host: "e1", Site: "east", Slots: 2},
	})
	topo, _ := topology.FromPlacements(placements)
	tree, err := topology.HierarchicalTree(topo)
	if err != nil {
		panic(err)
	}
	fmt.Println("site leaders:", topo.SiteLeaders())
	fmt.Println("root:", tree.Root, "parents:", tree.Parent)
	// Output:
	// site leaders: [0 2]
	// root: 0 parents: [-1 0 0 2]
}

func ExampleDoubleBinaryTree() {
	trees, err := topology.DoubleBinaryTree(6)
	if err != nil {
		panic(err)
	}
	for i, tr := range trees {
		fmt.Printf("tree %d: root %d, children %v\n", i, tr.Root, tr.Children)
	}
	// Output:
	// tree 0: root 3, children [[] [0 2] [] [1 5] [] [4]]
	// tree 1: root 4, children [[5] [] [1 3] [] [2 0] []]
}

// Dump a topology and replay it from the bytes, as from a file given to Load.
func ExampleParse() {
	data, err := topology.Marshal(topology.Topology{Ranks: []topology.RankInfo{
		{Rank: 0, Host: "node-a", Site: "west"},
		{Rank: 1, Host: "node-b", Site: "east"},
	}})
	if err != nil {
		panic(err)
	}
	topo, err := topology.Parse(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(topo.Sites(), topo.Hosts())

	_, err = topology.Parse([]byte(`{"version": 1, "ranks": [{"rank": 0, "host": "a", "Host": "b", "local_rank": 0}]}`))
	fmt.Println(err)
	// Output:
	// [west east] [node-a node-b]
	// topology: invalid: file: offset 56: unknown key "Host" (keys are case-sensitive)
}
