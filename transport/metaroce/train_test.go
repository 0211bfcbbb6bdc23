package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// writeCounter counts a sender's DATA datagrams and the writes a driver
// would make of them: one per path socket per flush (the engine writes
// the datagrams it polled in one batch per path, a path's as one GSO
// train), and the ACKs its peer sends.
type writeCounter struct {
	data, writes, acks int
	last               map[int]int // by path: the flush of its last DATA
}

func countWrites(s *sim, sender int) *writeCounter {
	w := &writeCounter{last: map[int]int{}}
	s.onTx = func(node int, flush int, tx metaroce.Transmit, b []byte) {
		typ := wire.Type(b[1])
		switch {
		case node != sender && typ == wire.TypeAck:
			w.acks++
		case node == sender && typ == wire.TypeData:
			w.data++
			if w.last[tx.Path] != flush {
				w.writes++
				w.last[tx.Path] = flush
			}
		}
	}
	return w
}

// TestTrainsOnALongPath streams 16 MiB over the two-site lab's WAN (8
// paths over 4 links of 200 Mbit/s, 4 ms round trip), paced by the
// receiver's target rate (a quarter of the links', as each of the 4
// connections of the lab's hierarchical AllReduce gets), and counts the
// writes a driver makes of the DATA: the datagrams one poll of the
// endpoint lets out on one path. Pacing and the window cap let out a
// train (train.go) on one path at a time, so a write carries two or more
// datagrams (2.11 and 2.14 on these seeds); before trains they released
// one or two at a time, each on the next path (1.83 and 1.01 datagrams a
// write). Goodput stays what it was (58-70 % before, 61-63 % with
// trains).
func TestTrainsOnALongPath(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int64
		minRate  float64 // goodput, of the receiver's capacity or the links'
	}{
		{"target rate", labRate, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(750); seed < 752; seed++ {
				s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000, RecvCapacity: tc.capacity})
				s.labLinks(simfabric.LinkConfig{Rate: labRate, Delay: 2 * time.Millisecond, Jitter: 50 * time.Microsecond, QueueBytes: 4 << 20})
				ca, cb := s.connect(0, 1)
				w := countWrites(s, 0)
				steady, _ := stream(s, 0, 1, ca, cb, 4, 4<<20, time.Minute)
				cap := float64(tc.capacity)
				if cap == 0 {
					cap = 4 * labRate
				}
				per := float64(w.data) / float64(max(w.writes, 1))
				t.Logf("seed %d: %d DATA datagrams in %d writes (%.2f a write), %d ACKs (%.2f a datagram); goodput %.1f %% of %.0f MB/s",
					seed, w.data, w.writes, per, w.acks, float64(w.acks)/float64(max(w.data, 1)), 100*steady/cap, cap/1e6)
				if per < 2 {
					t.Errorf("seed %d: %.2f DATA datagrams a write, want at least 2", seed, per)
				}
				if steady < tc.minRate*cap {
					t.Errorf("seed %d: goodput %.1f %% of %.0f MB/s, want at least %.0f %%", seed, 100*steady/cap, cap/1e6, 100*tc.minRate)
				}
			}
		})
	}
}
