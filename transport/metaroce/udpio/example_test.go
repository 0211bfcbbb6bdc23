package udpio_test

import (
	"fmt"
	"net/netip"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// Three datagrams become one GSO train without a copy (GatherTrains); the receiver walks whatever arrives (one GRO train, or
// three datagrams) with SplitSegments.
func Example() {
	loopback := netip.MustParseAddrPort("127.0.0.1:0")
	rx, err := udpio.Listen(loopback, udpio.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rx.Close()
	tx, err := udpio.Listen(loopback, udpio.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tx.Close()

	buf := []byte("one.two.six.")
	var datagrams []udpio.Message
	for i := 0; i < len(buf); i += 4 {
		datagrams = append(datagrams, udpio.Message{Buf: buf[i : i+4], Addr: rx.LocalAddr()})
	}
	out, _ := udpio.GatherTrains(nil, datagrams, nil)
	fmt.Printf("%d message, segment %d, %d datagrams\n", len(out), out[0].Segment, out[0].Segments())
	if _, err := tx.WriteBatch(out); err != nil {
		fmt.Println(err)
		return
	}

	in := make([]udpio.Message, 8)
	for i := range in {
		in[i].Buf = make([]byte, udpio.ReadBufferSize)
	}
	for got := 0; got < len(datagrams); {
		n, err := rx.ReadBatch(in)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, m := range in[:n] {
			udpio.SplitSegments(m, func(seg []byte) {
				fmt.Println(string(seg))
				got++
			})
		}
	}
	// Output:
	// 1 message, segment 4, 3 datagrams
	// one.
	// two.
	// six.
}
