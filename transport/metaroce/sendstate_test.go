package metaroce_test

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestSendStateLimits samples a connection's SendState every millisecond
// of a 4 MiB message over 4 lab paths (2 ms one way) whose receive is
// posted only 30 ms after the send: until then the message waits for its
// grant once the credit is spent (LimitCredit), with its unsent bytes
// counted; then it goes out under the windows (slow start: LimitWindow or
// LimitPace), and the connection ends idle with nothing unsent. A sample
// never finds a datagram ready: the simulation polls on time.
func TestSendStateLimits(t *testing.T) {
	s := newSim(t, 11, 2, metaroce.Config{Paths: 4, MaxDatagram: 9000, UnexpectedBytes: 256 << 10})
	s.wanPair(wanLinks(4, 0, 4*time.Millisecond))
	ca, cb := s.connect(0, 1)
	const size = 4 << 20
	start := s.fab.Now()
	require.NoError(t, s.eps[0].Send(start, ca, 1, 1, fill(size, 1)))
	count := map[metaroce.SendLimit]int{}
	var first metaroce.SendState
	sample := func(at time.Duration) metaroce.SendState {
		st, ok := s.eps[0].SendState(at, ca)
		require.True(t, ok)
		count[st.Limit]++
		return st
	}
	for at := start + time.Millisecond; at <= start+30*time.Millisecond; at += time.Millisecond {
		s.runTo(at)
		st := sample(at)
		if at == start+30*time.Millisecond {
			first = st
		}
	}
	require.Equal(t, metaroce.LimitCredit, first.Limit, "before the receive is posted: %+v", first)
	require.Greater(t, first.Unsent, int64(size/2), "unsent before the receive: %+v", first)
	require.Positive(t, first.Cwnd)
	credit := count[metaroce.LimitCredit]
	require.GreaterOrEqual(t, credit, 20, "credit-held samples of 30: %v", count)

	got := make([]byte, size)
	require.NoError(t, s.eps[1].PostRecv(s.fab.Now(), cb, 1, 1, got))
	for at := s.fab.Now() + time.Millisecond; s.count(0, metaroce.EventSendDone, 1, 1) == 0; at += time.Millisecond {
		require.Less(t, at, start+5*time.Second, "not done")
		s.runTo(at)
		sample(at)
	}
	require.Positive(t, count[metaroce.LimitWindow]+count[metaroce.LimitPace], "after the receive: %v", count)
	require.Zero(t, count[metaroce.LimitReady], "%v", count)
	last := sample(s.fab.Now())
	require.Equal(t, metaroce.LimitIdle, last.Limit)
	require.Zero(t, last.Unsent)
	_, ok := s.eps[0].SendState(s.fab.Now(), 999)
	require.False(t, ok)
	require.Equal(t, "credit", metaroce.LimitCredit.String())
	t.Logf("limits: %v", count)
}

// TestSendStateNoPath cuts every link of a connection sending 1 MiB: once
// each path has timed out and probes (none usable), SendState names
// LimitPaths, with the message's bytes still unsent.
func TestSendStateNoPath(t *testing.T) {
	s := newSim(t, 12, 2, metaroce.Config{Paths: 2, MaxDatagram: 9000})
	links := s.wanPair(wanLinks(2, 0, 4*time.Millisecond))
	ca, cb := s.connect(0, 1)
	const size = 1 << 20
	now := s.fab.Now()
	require.NoError(t, s.eps[1].PostRecv(now, cb, 1, 1, make([]byte, size)))
	require.NoError(t, s.eps[0].Send(now, ca, 1, 1, fill(size, 1)))
	var cuts []simfabric.Fault
	for _, l := range links {
		cuts = append(cuts, simfabric.Fault{At: now + 2*time.Millisecond, Link: l, Kind: simfabric.Cut})
	}
	require.NoError(t, s.fab.Schedule(cuts...))
	var st metaroce.SendState
	for at := now + time.Millisecond; at < now+2*time.Second; at += time.Millisecond {
		s.runTo(at)
		st, _ = s.eps[0].SendState(at, ca)
		if st.Limit == metaroce.LimitPaths {
			break
		}
	}
	require.Equal(t, metaroce.LimitPaths, st.Limit, "%+v", st)
	require.Positive(t, st.Unsent)
	require.Zero(t, st.Cwnd)
}
