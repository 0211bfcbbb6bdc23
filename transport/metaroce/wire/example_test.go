package wire_test

import (
	"fmt"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

func Example() {
	buf := make([]byte, 0, 1500)
	buf = wire.AppendData(buf, &wire.Data{
		Conn: 7, Path: 2, Seq: 1, Flags: wire.FlagFirst | wire.FlagLast,
		Stream: 1, Msg: 5, Total: 5, Payload: []byte("hello"),
	})
	var d wire.Data
	if err := wire.ParseData(buf, &d); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes on the wire; path %d seq %d: %q\n", len(buf), d.Path, d.Seq, d.Payload)
	buf[20] ^= 1 // damage in transit
	fmt.Println(wire.ParseData(buf, &d))
	// Output:
	// 81 bytes on the wire; path 2 seq 1: "hello"
	// wire: CRC32C mismatch
}
