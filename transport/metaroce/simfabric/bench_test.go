package simfabric

import (
	"testing"
	"time"
)

// BenchmarkFabric measures simulated events per second of real time: 16
// senders share a bottleneck, each packet crossing two links (two events),
// with ECN marking and tail drop. One b.N iteration sends one packet per
// sender and advances 1 µs.
func BenchmarkFabric(b *testing.B) {
	f, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	rx, _ := f.AddNode()
	bottleneck, _ := f.AddLink(LinkConfig{Rate: 1e10, Delay: 2 * time.Microsecond, QueueBytes: 256 << 10, ECNThresholdBytes: 64 << 10})
	var paths []PathID
	for range 16 {
		tx, _ := f.AddNode()
		access, _ := f.AddLink(LinkConfig{Rate: 1e9, Delay: time.Microsecond, Jitter: 500})
		p, _ := f.AddPath(tx, rx, access, bottleneck)
		paths = append(paths, p)
	}
	pkt := make([]byte, 1000)
	delivered := 0
	deliver := func(Delivery) { delivered++ }
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, p := range paths {
			if err := f.Send(p, pkt); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.AdvanceTo(f.Now()+time.Microsecond, deliver); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s := f.Stats()
	var events int64
	for _, l := range s.Links {
		events += l.Delivered.Packets + l.DroppedCut.Packets
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(delivered)/float64(b.N), "delivered/op")
}
