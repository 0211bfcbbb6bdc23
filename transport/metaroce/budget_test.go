package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestLongRTTBudgetGrows runs the lab's 50 ms row as gocoll bench p2p
// does it: 16 messages of 4 MiB in flight, each receive posted again as
// its message completes, with the default unexpected budget (4 MiB). A
// new message goes unconfirmed for a round trip (it is matched when its
// first piece arrives), and at 100 ms RTT a 4 MiB message is sent within
// that round trip, so a fixed 4 MiB budget held the sender to it (90.9 %
// of 800 Mbit/s from 6 s for 6 s); the budget grows to the
// bandwidth-delay product (10 MB) and the sender is no longer held
// (99 %). The budget stays within Config.UnexpectedMax.
func TestLongRTTBudgetGrows(t *testing.T) {
	const seed = 1750
	s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000})
	s.labLinks(simfabric.LinkConfig{Rate: labRate, Delay: 50 * time.Millisecond, QueueBytes: queueOf(labRate, shallowQueue)})
	ca, cb := s.connect(0, 1)
	t0 := s.fab.Now()
	startFlow(s, 0, 1, ca, cb, 4<<20, 16)
	s.runTo(t0 + 6*time.Second)
	got0 := s.arrived(1, cb)
	s.runTo(t0 + 12*time.Second)
	share := float64(s.arrived(1, cb)-got0) / 6 / (4 * labRate)
	cs, _ := s.pathStats(1, cb)
	t.Logf("50 ms one way, 16 x 4 MiB: %.1f %% of 800 Mbit/s; budget %d KiB, held %d B, drains %d", 100*share, cs.Budget>>10, cs.UnexpectedBytes, cs.Drains)
	if cs.Budget <= 4<<20 || cs.Budget > 64<<20 {
		t.Errorf("budget %d B, want above the 4 MiB it starts at and within UnexpectedMax (64 MiB) (seed %d)", cs.Budget, seed)
	}
	if share < 0.95 {
		t.Errorf("goodput %.1f %% of capacity, want >= 95 %% (seed %d)", 100*share, seed)
	}
}
