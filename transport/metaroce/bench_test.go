package metaroce

import (
	"testing"
	"time"
)

// BenchmarkTransfer moves 8 MiB messages between two endpoints over four
// lossless 10µs paths in virtual time, so it measures the CPU cost of the
// core alone (both ends, all packets and ACKs). Reported: MB/s of message
// data per CPU second.
func BenchmarkTransfer(b *testing.B) {
	for _, dgram := range []int{1500, 9000} {
		b.Run(map[int]string{1500: "datagram=1500", 9000: "datagram=9000"}[dgram], func(b *testing.B) {
			n := newTestNet(&testing.T{}, Config{Paths: 4, MaxDatagram: dgram})
			a, c := n.connect()
			msg := make([]byte, 8<<20)
			buf := make([]byte, len(msg))
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := n.eps[1].PostRecv(n.now, c, 1, uint64(i), buf); err != nil {
					b.Fatal(err)
				}
				if err := n.eps[0].Send(n.now, a, 1, uint64(i), msg); err != nil {
					b.Fatal(err)
				}
				for {
					if _, ok := n.done(0, EventSendDone, 1, uint64(i)); ok {
						break
					}
					if !n.step() {
						b.Fatal("stalled")
					}
				}
				n.events = [2][]Event{}
			}
			b.ReportMetric(float64(n.now)/float64(time.Millisecond)/float64(b.N), "virtual-ms/op")
		})
	}
}

// BenchmarkIdlePoll measures what a driver pays per input with many open,
// idle connections: NextTimeout, then PollTransmit and PollEvent finding
// nothing.
func BenchmarkIdlePoll(b *testing.B) {
	n := newTestNet(&testing.T{}, Config{Paths: 8, MaxConns: 2048})
	for range 1000 {
		if _, err := n.eps[0].Connect(n.now, 1); err != nil {
			b.Fatal(err)
		}
	}
	n.runFor(time.Millisecond)
	ep := n.eps[0]
	if len(ep.Conns()) != 1000 {
		b.Fatalf("%d connections", len(ep.Conns()))
	}
	buf := make([]byte, 65536)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t, _ := ep.NextTimeout()
		if t <= n.now {
			b.Fatal("a timer is due")
		}
		if _, ok := ep.PollTransmit(n.now, buf); ok {
			b.Fatal("something to send")
		}
		ep.PollEvent()
	}
}
