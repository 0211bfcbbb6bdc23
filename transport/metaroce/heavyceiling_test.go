package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStoryRandomLossesJudgedHeavyDoNotPinThePath: a path of constant RTT
// (no queue) loses 4 of a window of 6 in one round trip, as 5 % random
// loss now and then does at small windows: lossRounds judges it heavy
// loss, and a heavy loss ceiling is set at the path's floor-level RTT.
// Such a ceiling cannot tell a queue (its delay rule holds at every RTT
// the path sees), so it may cut only while congestion losses keep coming
// (heavyCeilingRTTs): with no more loss the path must grow again, not be
// cut every other round trip for floorWindow (it was: 300 delay cuts in
// 600 round trips, the window held at 12 packets; in the simulated fabric
// at 5 % loss, one packet).
func TestStoryRandomLossesJudgedHeavyDoNotPinThePath(t *testing.T) {
	s := newPathStory(t)
	const rtt = time.Millisecond
	round := func(lose map[uint64]bool) {
		first := s.p.next
		s.send(s.p.win.cwnd / 1000)
		sent := s.now
		s.now += rtt
		var got []uint64
		for q := first; q < s.p.next; q++ {
			if !lose[q] {
				got = append(got, q)
			}
		}
		s.ack(s.arrive(sent, false, got...))
	}
	// Out of slow start at 4 packets, at the floor's RTT, then 6.
	for s.p.win.cwnd < 8_000 {
		round(nil)
	}
	s.p.win.onSignal(signalECN, s.now, s.now, float64(4_000)/float64(s.p.win.cwnd), 0)
	for range 2 {
		round(nil)
	}
	require.Equal(t, 6_000, s.p.win.cwnd)
	next := s.p.next
	round(map[uint64]bool{next: true, next + 2: true, next + 3: true, next + 4: true})
	round(nil)
	require.True(t, s.p.ceil.heavyAt(s.now), "4 of 6 lost in a round: heavy loss, a heavy ceiling")
	delay0 := s.p.win.cuts[signalDelay]
	for range 600 {
		round(nil)
	}
	cuts := s.p.win.cuts[signalDelay] - delay0
	t.Logf("after 600 round trips without loss: %d delay cuts, window %d packets", cuts, s.p.win.cwnd/1000)
	require.LessOrEqual(t, cuts, int64(heavyCeilingRTTs), "the heavy ceiling at the floor cut beyond its hold")
	require.Greater(t, s.p.win.cwnd, 20_000, "the window grows again")
}
