package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestAckBytesOnALongPath streams 16 MiB over the two-site lab's WAN (8
// paths over 4 links of 200 Mbit/s, 2 a link, 4 ms round trip, 50 µs of
// jitter) with 9000-byte datagrams, the receiver's capacity a quarter of
// the links' (as each of the 4 connections of the lab's hierarchical
// AllReduce gets), and weighs what comes back, all ACKs, against the DATA
// bytes. A DATA packet arrives about every 360 µs, more than the ACK hold
// (250 µs), so about every packet brings an ACK: it carries blocks only for
// the paths that received since the last ACK (recvPath.due; a path with a
// recent hole for two ACKs), not for all 8 (540 bytes, 5.9 % of the data
// on main, on these seeds; 175 bytes and 1.9 % with every arrival in two
// ACKs; 114 bytes and 1.25 % now; bench/results/wan_overhead.md). Goodput stays
// above half the receiver's capacity (60-70 %, before as after).
func TestAckBytesOnALongPath(t *testing.T) {
	for seed := int64(740); seed < 743; seed++ {
		s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000, RecvCapacity: labRate})
		fwd, rev := s.labLinks(simfabric.LinkConfig{Rate: labRate, Delay: 2 * time.Millisecond, Jitter: 50 * time.Microsecond, QueueBytes: 4 << 20})
		ca, cb := s.connect(0, 1)
		before := s.fab.Stats()
		steady, _ := stream(s, 0, 1, ca, cb, 4, 4<<20, time.Minute)
		after := s.fab.Stats()
		var data, back, acks int64
		for k := range fwd {
			data += after.Links[fwd[k]].Delivered.Bytes - before.Links[fwd[k]].Delivered.Bytes
			back += after.Links[rev[k]].Delivered.Bytes - before.Links[rev[k]].Delivered.Bytes
			acks += after.Links[rev[k]].Delivered.Packets - before.Links[rev[k]].Delivered.Packets
		}
		share := float64(back) / float64(max(data, 1))
		t.Logf("seed %d: %d B of DATA, %d B back in %d ACKs (%.0f B each, %.2f %% of the data); goodput %.1f%% of the receiver's capacity",
			seed, data, back, acks, float64(back)/float64(max(acks, 1)), 100*share, 100*steady/labRate)
		if share > 0.015 {
			t.Errorf("seed %d: the ACKs weigh %.2f %% of the DATA bytes, want at most 1.5 %%", seed, 100*share)
		}
		if steady < 0.5*labRate {
			t.Errorf("seed %d: goodput %.1f%% of the receiver's capacity, below 50%%", seed, 100*steady/labRate)
		}
	}
}
