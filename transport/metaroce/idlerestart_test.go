package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// TestIdleRestartAlone sends 4 MiB four times over one connection of 8
// paths on 4 links of 200 Mbit/s, 2 ms one way and 20 ms of queue (the
// lab's WAN; a ring's crossing, alone on its links), 20 ms idle between
// messages: after each idle spell the message arrives within one round
// trip (4.4 ms) of the links' time for it. The window the last message
// left (with the queue it built: srtt 7-20 ms against 4.4) is paced at
// cwnd/srtt, about the rate the path delivered, and the queue it fills
// again keeps the links busy: an idle spell alone costs no round trip
// (bench/results/tree_lab.md, "Session 23, open23").
func TestIdleRestartAlone(t *testing.T) {
	s := newSim(t, 1, 2, metaroce.Config{Paths: 8, MaxDatagram: 8972})
	var fwd, rev []simfabric.LinkID
	for range 4 {
		cfg := simfabric.LinkConfig{Rate: labRate, Delay: 2 * time.Millisecond, QueueBytes: labRate / 50}
		fwd, rev = append(fwd, s.link(cfg)), append(rev, s.link(cfg))
	}
	for i := range 8 {
		s.path(0, 1, i, fwd[i%4])
		s.path(1, 0, i, rev[i%4])
	}
	ca, cb := s.connect(0, 1)
	const size = 4 << 20
	links := time.Duration(float64(size)/float64(4*labRate)*float64(time.Second)) + 2*time.Millisecond
	for k := range 4 {
		took := transfer(s, ca, cb, uint64(k+1), size, 10*time.Second)
		t.Logf("message %d: 4 MiB in %v (links %v)", k, took, links)
		if k > 0 && took > links+4400*time.Microsecond {
			t.Errorf("message %d after 20 ms idle: %v, more than a round trip over the links' %v", k, took, links)
		}
		s.runTo(s.fab.Now() + 20*time.Millisecond)
	}
}
