package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestAckCoalescing streams 16 MiB over the lab's paths (8 paths over 4
// links of 200 Mbit/s, 2 a link, 50 µs of jitter as a loaded host's
// scheduling adds) with 9000-byte datagrams and counts the datagrams each
// way: on a 4 ms round trip (the lab's WAN) the receiver
// coalesces ACKs (ackhold.go), on 100 µs it acknowledges every
// Config.AckEvery (2) packets of a path or within AckDelay, as before;
// goodput stays above 85 % of capacity in both. Before the coalescing the
// 4 ms case read 2.03 DATA packets per ACK (seed 701), as 100 µs reads 1.57.
func TestAckCoalescing(t *testing.T) {
	for i, c := range []struct {
		rtt            time.Duration
		minPer, maxPer float64 // DATA packets per reverse datagram (ACK)
	}{
		{100 * time.Microsecond, 1, 2.5},
		{4 * time.Millisecond, 3.5, 64},
	} {
		t.Run(fmt.Sprint(c.rtt), func(t *testing.T) {
			s := newSim(t, int64(700+i), 2, metaroce.Config{Paths: 8, MaxDatagram: 9000})
			fwd, rev := s.labLinks(simfabric.LinkConfig{Rate: labRate, Delay: c.rtt / 2, Jitter: 50 * time.Microsecond, QueueBytes: 4 << 20})
			ca, cb := s.connect(0, 1)
			before := s.fab.Stats()
			steady, _ := stream(s, 0, 1, ca, cb, 4, 4<<20, time.Minute)
			after := s.fab.Stats()
			var data, acks int64
			for k := range fwd {
				data += after.Links[fwd[k]].Delivered.Packets - before.Links[fwd[k]].Delivered.Packets
				acks += after.Links[rev[k]].Delivered.Packets - before.Links[rev[k]].Delivered.Packets
			}
			per := float64(data) / float64(max(acks, 1))
			t.Logf("rtt %v: %d DATA, %d back (%.2f per ACK); goodput %.1f%% of capacity (seed %d)",
				c.rtt, data, acks, per, 100*steady/(4*labRate), s.seed)
			if per < c.minPer || per > c.maxPer {
				t.Errorf("%.2f DATA packets per ACK, want %g to %g (seed %d)", per, c.minPer, c.maxPer, s.seed)
			}
			if steady < 0.85*4*labRate {
				t.Errorf("goodput %.1f%% of capacity, below 85%% (seed %d)", 100*steady/(4*labRate), s.seed)
			}
		})
	}
}
