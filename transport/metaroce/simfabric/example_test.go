package simfabric_test

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// Example sends three packets from a to b over a 1 MB/s link with 1 ms of
// propagation delay and a queue that holds two of them, then cuts the link.
// b echoes each packet back over the reverse link, from inside the deliver
// callback.
func Example() {
	fab, err := simfabric.New(simfabric.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	a, _ := fab.AddNode()
	b, _ := fab.AddNode()
	ab, link, _ := fab.Connect(a, b, simfabric.LinkConfig{Rate: 1_000_000, Delay: time.Millisecond, QueueBytes: 2000})
	ba, _, _ := fab.Connect(b, a, simfabric.LinkConfig{Delay: time.Millisecond})

	for range 3 {
		_ = fab.Send(ab, make([]byte, 1000)) // the third finds the queue full
	}
	_ = fab.Schedule(simfabric.Fault{At: 10 * time.Millisecond, Link: link, Kind: simfabric.Cut})

	deliver := func(d simfabric.Delivery) {
		fmt.Printf("%v: %d bytes %d->%d\n", d.At, len(d.Data), d.From, d.To)
		if d.To == b {
			_ = fab.Send(ba, d.Data[:100]) // enters the fabric at d.At
		}
	}
	if err := fab.AdvanceTo(20*time.Millisecond, deliver); err != nil {
		panic(err)
	}
	_ = fab.Send(ab, make([]byte, 1000)) // the link is cut by now

	s := fab.Stats().Links[link]
	fmt.Printf("link: sent %d, delivered %d, queue drops %d, cut drops %d, max queue %d bytes\n",
		s.Sent.Packets, s.Delivered.Packets, s.DroppedQueueFull.Packets, s.DroppedCut.Packets, s.MaxQueueBytes)
	// Output:
	// 2ms: 1000 bytes 0->1
	// 3ms: 1000 bytes 0->1
	// 3ms: 100 bytes 1->0
	// 4ms: 100 bytes 1->0
	// link: sent 4, delivered 2, queue drops 1, cut drops 1, max queue 2000 bytes
}
