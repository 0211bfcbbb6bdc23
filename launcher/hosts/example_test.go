package hosts_test

import (
	"fmt"
	"strings"

	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/topology"
)

// A hostfile with two sites; ranks are numbered site by site, so the
// interleaved lines still give each site consecutive ranks.
func ExampleParseHostfile() {
	file := `node1 slots=2 site=paris addr=10.1.0.11
node3 slots=1 site=lyon  addr=10.2.0.11
node2 slots=1 site=paris addr=10.1.0.12
`
	list, err := hosts.ParseHostfile("hosts.txt", strings.NewReader(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	placements, _ := topology.AssignRanks(list)
	for _, p := range placements {
		fmt.Printf("rank %d: %s on %s (%s)\n", p.Rank, p.Site, p.Host, p.Addr)
	}
	_, err = hosts.ParseHostfile("hosts.txt", strings.NewReader("node1 slots=four\n"))
	fmt.Println(err)
	// Output:
	// rank 0: paris on node1 (10.1.0.11)
	// rank 1: paris on node1 (10.1.0.11)
	// rank 2: paris on node2 (10.1.0.12)
	// rank 3: lyon on node3 (10.2.0.11)
	// hosts.txt:1: slots="four" is not a whole number from 1 to 1048576
}

func ExampleExpandNodeList() {
	names, _ := hosts.ExpandNodeList("gpu[08-10],login1", 10)
	fmt.Println(names)
	// Output: [gpu08 gpu09 gpu10 login1]
}
