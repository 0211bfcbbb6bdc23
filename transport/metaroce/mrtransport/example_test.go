package mrtransport_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

// Example builds two ranks on loopback, moves one message from rank 0 to
// rank 1, and runs an AllReduce over them.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eps, err := mrtransport.NewLocalWorld(ctx, 2, mrtransport.Config{Paths: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		for _, ep := range eps {
			_ = ep.Close()
		}
	}()

	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	buf := make([]byte, 32)
	recv := eps[1].Recv(0, tag, buf)
	send := eps[0].Send(1, tag, []byte("hello over MetaRoCE"))
	n, err := recv.Wait(ctx)
	if _, serr := send.Wait(ctx); err != nil || serr != nil {
		fmt.Println(err, serr)
		return
	}
	fmt.Printf("rank 1 got %q\n", buf[:n])

	sums := make([][]float64, 2)
	done := make(chan error, 2)
	for r, ep := range eps {
		go func() {
			c, err := collective.New(ep, 7, collective.Config{})
			if err != nil {
				done <- err
				return
			}
			sums[r] = make([]float64, 3)
			done <- collective.AllReduce(ctx, c, []float64{1, 2, float64(r)}, sums[r], collective.Sum)
		}()
	}
	for range eps {
		if err := <-done; err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("AllReduce:", sums[0], sums[1])
	fmt.Println("paths per connection:", eps[0].Stats().Peers[0].Conn.Paths)
	// Output:
	// rank 1 got "hello over MetaRoCE"
	// AllReduce: [2 4 1] [2 4 1]
	// paths per connection: 4
}

// ExampleParsePortRange reads the port range form of Config.PortRange (the
// launcher's environment gives it as a string).
func ExampleParsePortRange() {
	r, err := mrtransport.ParsePortRange("50000-50999")
	fmt.Println(r.Lo, r.Hi, r.Len(), err)
	_, err = mrtransport.ParsePortRange("50999-50000")
	fmt.Println(err)
	// Output:
	// 50000 50999 1000 <nil>
	// mrtransport: port range 50999-50000: want 1 <= low <= high <= 65535
}

// ExampleDatagramForMTU gives the datagram sizes of common MTUs.
func ExampleDatagramForMTU() {
	fmt.Println(mrtransport.DatagramForMTU(1500, false), mrtransport.DatagramForMTU(9000, false), mrtransport.DatagramForMTU(9000, true))
	// Output: 1472 8972 8952
}
