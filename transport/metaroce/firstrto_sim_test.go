package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestFreshLongPathTimesOutAtMostOnce: a connection of three paths of 2 ms
// and one of 200 ms sends 16 MiB. The long path's first RTO follows the
// short paths' samples (conn.refreshFirstRTO), so it may time out before
// its first ACK; then its answered probe gives it a sample of its own and
// it times out no more: at most one (spurious) timeout, and it carries
// data again by the end.
func TestFreshLongPathTimesOutAtMostOnce(t *testing.T) {
	const seed = 18
	s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: 9000})
	s.wanPair(wanLinks(4, 0, 2*time.Millisecond, 2*time.Millisecond, 2*time.Millisecond, 200*time.Millisecond))
	ca, cb := s.connect(0, 1)
	took := transfer(s, ca, cb, 1, 16<<20, 10*time.Second)
	took2 := transfer(s, ca, cb, 2, 16<<20, 10*time.Second)
	_, ps := s.pathStats(0, ca)
	t.Logf("16 MiB in %v, then in %v; long path: %+v", took, took2, ps[3])
	require.LessOrEqual(t, ps[3].Timeouts, int64(1), "the long path timed out repeatedly")
	require.Equal(t, metaroce.PathGood, ps[3].State)
	require.Positive(t, ps[3].PacketsAcked)
}

// TestFreshPathLossResentWithinFewRTTs: two paths of 10 ms; path 1's
// forward link is cut for the first 50 ms of a 1 MiB message, so the
// packets it carries first are lost before it has an RTT sample of its
// own. Its first timeout follows path 0's samples (a few of its RTOs), so
// the message arrives within a few RTTs of the cut's end, not after
// initialRTO's 1 s (before conn.refreshFirstRTO: 1.0 s).
func TestFreshPathLossResentWithinFewRTTs(t *testing.T) {
	const seed = 14
	rtt := 10 * time.Millisecond
	s := newSim(t, seed, 2, metaroce.Config{Paths: 2, MaxDatagram: 9000})
	links := s.wanPair(wanLinks(2, 0, rtt))
	ca, cb := s.connect(0, 1)
	now := s.fab.Now()
	require.NoError(t, s.fab.Schedule(simfabric.Fault{At: now, Link: links[2], Kind: simfabric.Cut},
		simfabric.Fault{At: now + 5*rtt, Link: links[2], Kind: simfabric.Restore}))
	took := transfer(s, ca, cb, 1, 1<<20, 5*time.Second)
	_, ps := s.pathStats(0, ca)
	t.Logf("1 MiB in %v; path 1: %+v", took, ps[1])
	require.Positive(t, ps[1].Timeouts, "path 1 lost nothing: the test does not test")
	require.Less(t, took, 20*rtt, "path 1's first timeout ignored path 0's samples")
}
