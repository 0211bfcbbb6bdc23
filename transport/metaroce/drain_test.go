package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A connection drains only when at least half of its usable paths keep
// small windows full: one path that a loss left small on a long fat
// connection does not stop the others' round trips of data.
func TestDrainNeedsHalfThePathsSmall(t *testing.T) {
	n := newTestNet(t, Config{Paths: 8})
	a, _ := n.connect()
	c := n.eps[0].conns[a]
	set := func(small int) {
		for i, p := range c.paths {
			p.rtt.has = true
			p.win.cwnd = 200 * p.win.mss
			if i < small {
				p.win.cwnd = 4 * p.win.mss
			}
			p.inflight = p.win.cwnd
		}
	}
	set(1)
	require.False(t, c.needsDrain(n.now), "1 small path of 8")
	set(3)
	require.False(t, c.needsDrain(n.now), "3 small paths of 8")
	set(4)
	require.True(t, c.needsDrain(n.now), "4 small paths of 8")
	set(8)
	require.True(t, c.needsDrain(n.now), "every path small")
	c.paths[5].state, c.paths[6].state, c.paths[7].state = PathDead, PathDead, PathDead
	set(3)
	require.True(t, c.needsDrain(n.now), "3 small paths of the 5 usable")
}

// A connection that comes back from an idle spell (nothing in flight,
// nothing sent for at least a drain's pause) has just drained: its next
// drain is due the time between drains later, not in the middle of the
// data it comes back with. One back after less than the pause drains when
// due.
func TestDrainIdleSpellCounts(t *testing.T) {
	for _, idle := range []bool{true, false} {
		n := newTestNet(t, Config{Paths: 8})
		a, _ := n.connect()
		c := n.eps[0].conns[a]
		for _, p := range c.paths {
			p.rtt.has, p.rtt.srtt = true, 5*time.Millisecond
			p.win.cwnd = 4 * p.win.mss
			p.inflight = 0
		}
		pause, every := c.drainSpan()
		require.False(t, c.draining(n.now+time.Second), "the first call times the first drain")
		due := c.drainNext
		back := due - 100*time.Millisecond
		c.lastSend = back - pause/2
		if idle {
			c.lastSend = back - pause
		}
		require.False(t, c.draining(back))
		for _, p := range c.paths {
			p.inflight = p.win.cwnd // the small windows it came back with, full
		}
		if idle {
			require.False(t, c.draining(due), "back after %v idle, a drain's pause", pause)
			require.Equal(t, back+every, c.drainNext)
			continue
		}
		require.True(t, c.draining(due), "back after %v idle, half a drain's pause", pause/2)
	}
}
