package metaroce

import (
	"testing"

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
