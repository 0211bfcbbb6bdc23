package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A small window of a path that took no congestion signal (onAck's free)
// shares its additive step among freeShare of the connection's paths, not
// all of them: with 8 paths of 8 packets, half a packet per window instead
// of an eighth. A connection of 4 paths or fewer grows each path by a
// whole packet, as one of many paths does once its window passes
// coupleBelow.
func TestFreeWindowSharesStepAmongFewerPaths(t *testing.T) {
	for _, c := range []struct {
		paths int
		free  bool
		want  int
	}{{8, false, 8_125}, {8, true, 8_500}, {4, true, 9_000}, {1, true, 9_000}} {
		w := newWindow(1000, 8, maxWindowPkts, c.paths)
		w.ssthresh = w.cwnd // congestion avoidance
		w.onAck(w.cwnd, time.Millisecond, c.free)
		require.Equal(t, c.want, w.cwnd, "paths %d free %v", c.paths, c.free)
	}
}

// A loss taken for congestion marks the path congested for floorWindow,
// and an ACK then grows its window coupled again; a path that never took
// one is free.
func TestCongestionLossCouplesThePath(t *testing.T) {
	var p path
	p.win = newWindow(1000, 8, maxWindowPkts, 8)
	now := 3 * time.Second
	require.False(t, p.congested(now))
	p.lr.count(0, heavyLossMin, now, time.Millisecond) // heavy loss: congestion
	cut, _ := p.lossCut(&Config{}, now)
	require.True(t, cut)
	require.True(t, p.congested(now))
	require.True(t, p.congested(now+floorWindow-1))
	require.False(t, p.congested(now+floorWindow))
}

// Through onBlock: a path that took no congestion signal grows by
// freeShare/paths packets per window acknowledged; the same path after a
// congestion loss by 1/paths.
func TestStoryFreePathGrowsFaster(t *testing.T) {
	grow := func(congested bool) int {
		s := newPathStory(t)
		s.now = time.Second
		s.p.win = newWindow(s.p.win.mss, 4, maxWindowPkts, 8)
		s.p.win.ssthresh = s.p.win.cwnd
		if congested {
			s.p.congestedAt = s.now
		}
		start := s.p.win.cwnd
		s.send(4)
		s.now += 100 * time.Microsecond
		s.ack(s.arrive(s.now-100*time.Microsecond, false, seqs(0, 4)...))
		return s.p.win.cwnd - start
	}
	free, coupled := grow(false), grow(true)
	require.Positive(t, coupled)
	require.Equal(t, freeShare*coupled, free, "free step %d, coupled %d", free, coupled)
}
