package route_test

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/route"
)

// Two ranks that reach themselves through one transport and each other
// through another, as a launcher joins shared memory within a host and the
// network between hosts.
func ExampleNew() {
	local, _ := inproc.NewWorld(2) // stands for shared memory
	network, _ := inproc.NewWorld(2)
	eps := make([]*route.Endpoint, 2)
	for r := range eps {
		byPeer := make([]transport.Endpoint, 2)
		for p := range byPeer {
			byPeer[p] = network.Endpoint(r)
			if p == r {
				byPeer[p] = local.Endpoint(r)
			}
		}
		ep, err := route.New(byPeer)
		if err != nil {
			panic(err)
		}
		eps[r] = ep
	}
	defer eps[0].Close()
	defer eps[1].Close()

	ctx := context.Background()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	buf := make([]byte, 5)
	recv := eps[1].Recv(0, tag, buf) // through the network
	if _, err := eps[0].Send(1, tag, []byte("hello")).Wait(ctx); err != nil {
		panic(err)
	}
	n, err := recv.Wait(ctx)
	fmt.Println(string(buf[:n]), err)
	// Output: hello <nil>
}
