package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// stepAgent hands node's datagrams to its endpoint with arrival times, as
// mrtransport's engine.arrival did before it detected wall-clock steps: a
// stamp converted with the wall clock's offset, clamped to [the path's
// previous arrival, now]. Once armed, the next datagram's stamp is read
// across a wall-clock step of step: it looks step older than it is.
type stepAgent struct {
	s       *sim
	node    int
	step    time.Duration
	armed   bool
	prev    map[int]time.Duration
	shifted int
}

func (a *stepAgent) deliver(d simfabric.Delivery) {
	path := a.s.index[d.Path]
	at := d.At
	if a.armed {
		at, a.armed = d.At-a.step, false
		a.shifted++
	}
	at = min(max(at, a.prev[path]), d.At)
	a.prev[path] = at
	a.s.eps[a.node].HandleDatagramAt(d.At, at, path, d.CE, d.Data)
	a.s.flush(a.node)
}
func (a *stepAgent) nextTimeout() (time.Duration, bool) { return 0, false }
func (a *stepAgent) timeout(time.Duration)              {}

// TestSteppedArrivalAgesOut (review C15 F1): one DATA datagram whose
// arrival is 50 ms early (a kernel stamp read across a wall-clock step, on
// a path idle for longer) makes its one-way delay 50 ms too small. The
// receiver's share then sees a 50 ms standing queue and hands out half its
// capacity; with the connection's lowest one-way delay a lifetime minimum
// it did so for the connection's life. It is the minimum of the last one
// to two floorWindows: two windows on, the share is whole again.
func TestSteppedArrivalAgesOut(t *testing.T) {
	const rate = 1.25e8 // 1 Gbit/s, RecvCapacity the same
	run := func(step time.Duration) (after, later int64) {
		s := newSim(t, 15, 2, metaroce.Config{Paths: 1, MaxDatagram: 9000, RecvCapacity: rate})
		s.pair(0, 1, simfabric.LinkConfig{Rate: rate, Delay: 5 * time.Microsecond, QueueBytes: 4 << 20})
		ag := &stepAgent{s: s, node: 1, step: step, prev: map[int]time.Duration{}}
		s.agents = map[int]simAgent{1: ag}
		ca, cb := s.connect(0, 1)
		s.runTo(s.fab.Now() + 100*time.Millisecond) // idle: the path's previous arrival is old
		ag.armed = true
		startPump(s, ca, cb, 64<<10, 4)
		s.runTo(s.fab.Now() + 100*time.Millisecond)
		cs, _ := s.pathStats(1, cb)
		after = cs.Share
		s.runTo(s.fab.Now() + 2*floorWindowForTest + 100*time.Millisecond)
		cs, _ = s.pathStats(1, cb)
		t.Logf("step %v: shifted %d, share after the step %d B/s, two floor windows later %d B/s", step, ag.shifted, after, cs.Share)
		return after, cs.Share
	}
	_, okLater := run(0)
	badAfter, badLater := run(50 * time.Millisecond)
	require.Less(t, badAfter, okLater*3/4, "the stepped arrival did not cut the share: the test shows nothing")
	require.Greater(t, badLater, okLater*3/4, "one stepped arrival still cuts the receiver's share two floor windows later")
}

// floorWindowForTest is the core's floorWindow (rtt.go).
const floorWindowForTest = 5 * time.Second
