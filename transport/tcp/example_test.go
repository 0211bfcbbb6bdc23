package tcp_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/tcp"
)

// Two ranks on loopback exchange a message. In a real job each rank calls
// tcp.Listen, publishes Listener.Addr through its launcher, and calls
// Listener.Connect with all ranks' addresses; NewLocalWorld does that for
// every rank in this process.
func ExampleNewLocalWorld() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eps, err := tcp.NewLocalWorld(ctx, 2, tcp.Config{JobID: 42})
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
	buf := make([]byte, 64)
	recv := eps[1].Recv(0, tag, buf)
	send := eps[0].Send(1, tag, []byte("hello, rank 1"))
	n, err := recv.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := send.Wait(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rank 1 got %q\n", buf[:n])
	// Output: rank 1 got "hello, rank 1"
}
