package udpio

import (
	"testing"

	"golang.org/x/net/ipv4"
)

// BenchmarkXNetReadBatch is the comparison behind reading with raw
// recvmmsg: the same ping of 64 datagrams read back through
// golang.org/x/net/ipv4 PacketConn.ReadBatch, which allocates a
// *net.UDPAddr and its IP for every datagram received.
func BenchmarkXNetReadBatch(b *testing.B) {
	rx := listen(b, loopback4, Config{DisableGRO: true, DisableECN: true})
	tx := listen(b, loopback4, Config{})
	ms := make([]Message, 64)
	for i := range ms {
		ms[i] = Message{Buf: pattern(i, 1452), Addr: rx.LocalAddr()}
	}
	pc := ipv4.NewPacketConn(rx.conn)
	in := make([]ipv4.Message, 64)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, ReadBufferSize)}
	}
	b.SetBytes(64 * 1452)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tx.WriteBatch(ms); err != nil {
			b.Fatal(err)
		}
		for left := len(ms); left > 0; {
			n, err := pc.ReadBatch(in, 0)
			if err != nil {
				b.Fatal(err)
			}
			left -= n
		}
	}
}
