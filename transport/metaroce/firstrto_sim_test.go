package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
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
