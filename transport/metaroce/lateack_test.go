package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestLateAcksTakeBackResends streams 16 MiB over the two-site lab's WAN
// (8 paths over 4 links of 200 Mbit/s each way, 4 ms round trip) and, in
// the middle, holds every ACK for 30 ms (the links back take 32 ms for
// 30 ms, as a receiver that went unscheduled that long answers late):
// 6 of the 8 paths time out, spuriously, with no path of the connection
// acknowledged since their ACKs were due. Each such first timeout on a
// silent connection resends only its oldest packet (lateack.go, "A silent
// connection"), and the late ACKs then cover the rest, still in flight,
// or take back the resends still queued: 65 packets were resent for the
// 6 timeouts before either (seed 760; 761 and 762 the same), 29 with the
// late ACKs' take-back alone (what the 2 paths that did not time out took
// before the ACKs came), 4 with both.
func TestLateAcksTakeBackResends(t *testing.T) {
	for seed := int64(760); seed < 761; seed++ {
		s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000})
		link := simfabric.LinkConfig{Rate: labRate, Delay: 2 * time.Millisecond, QueueBytes: 500_000}
		_, rev := s.labLinks(link)
		ca, cb := s.connect(0, 1)
		now := s.fab.Now()
		slow := link
		slow.Delay = 32 * time.Millisecond
		for _, l := range rev {
			if err := s.fab.Schedule(
				simfabric.Fault{At: now + 60*time.Millisecond, Link: l, Kind: simfabric.SetConfig, Config: slow},
				simfabric.Fault{At: now + 90*time.Millisecond, Link: l, Kind: simfabric.SetConfig, Config: link},
			); err != nil {
				t.Fatal(err)
			}
		}
		_, whole := stream(s, 0, 1, ca, cb, 4, 4<<20, time.Minute)
		_, ps := s.pathStats(0, ca)
		var resent, timeouts, spurious int64
		for _, p := range ps {
			resent, timeouts, spurious = resent+p.Retransmits, timeouts+p.Timeouts, spurious+p.SpuriousTimeouts
		}
		t.Logf("seed %d: %d resends, %d timeouts (%d spurious); %.1f%% of capacity over the transfer", seed, resent, timeouts, spurious, 100*whole/(4*labRate))
		if spurious == 0 {
			t.Errorf("seed %d: no spurious timeout: the test's ACK hold did not work", seed)
		}
		if resent > timeouts {
			t.Errorf("seed %d: %d resends for %d timeouts (%d spurious), want at most one a timeout", seed, resent, timeouts, spurious)
		}
	}
}
