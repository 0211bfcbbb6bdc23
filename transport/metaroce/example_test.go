package metaroce_test

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// Example connects two endpoints over a perfect two-path network with 10µs
// of delay, driven by hand, and sends one message.
func Example() {
	a, _ := metaroce.NewEndpoint(metaroce.Config{NodeID: 1, Paths: 2})
	b, _ := metaroce.NewEndpoint(metaroce.Config{NodeID: 2, Paths: 2})
	eps := map[uint64]*metaroce.Endpoint{1: a, 2: b}

	type datagram struct {
		at   time.Duration
		to   uint64
		path int
		data []byte
	}
	var inFlight []datagram
	var now time.Duration
	buf := make([]byte, a.Config().MaxDatagram)
	var conn metaroce.ConnID
	received := make([]byte, 5)
	// pump handles each endpoint's events, then sends what it has to send.
	pump := func() {
		for _, node := range []uint64{1, 2} {
			ep := eps[node]
			for ev, ok := ep.PollEvent(); ok; ev, ok = ep.PollEvent() {
				switch ev.Kind {
				case metaroce.EventAccepted:
					_ = ep.PostRecv(now, ev.Conn, 7, 1, received)
				case metaroce.EventConnected:
					_ = ep.Send(now, conn, 7, 1, []byte("hello"))
				case metaroce.EventRecvDone:
					fmt.Printf("node %d received %q (%d bytes) at %v\n", node, received[:ev.N], ev.N, now)
				case metaroce.EventSendDone:
					fmt.Printf("node %d: send done at %v\n", node, now)
				}
			}
			for tx, ok := ep.PollTransmit(now, buf); ok; tx, ok = ep.PollTransmit(now, buf) {
				inFlight = append(inFlight, datagram{now + 10*time.Microsecond, tx.Peer, tx.Path, append([]byte(nil), buf[:tx.N]...)})
			}
		}
	}
	conn, _ = a.Connect(now, 2)
	for range 100 {
		pump()
		if len(inFlight) == 0 {
			break
		}
		d := inFlight[0]
		inFlight = inFlight[1:]
		now = d.at
		eps[d.to].HandleDatagram(now, d.path, false, d.data)
	}
	// Output:
	// node 2 received "hello" (5 bytes) at 30µs
	// node 1: send done at 40µs
}
