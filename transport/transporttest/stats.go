package transporttest

import (
	"math"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// testStats checks, for a transport that reports statistics, that the
// messages and bytes each rank completed with its peer are counted on
// both sides, that no rank lists itself, and that a transport with paths
// gives shares that add up to one over at least the bytes sent.
func testStats(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	if _, ok := eps[0].(transport.StatsReporter); !ok {
		t.Skipf("%T reports no statistics", eps[0])
	}
	before := [2]transport.Stats{transport.StatsOf(eps[0]), transport.StatsOf(eps[1])}
	const small = 100
	bufs := [][]byte{make([]byte, small), make([]byte, LargeBytes), make([]byte, small)}
	recvs := []transport.Request{eps[1].Recv(0, tag(1, 0), bufs[0]), eps[1].Recv(0, tag(1, 1), bufs[1]), eps[0].Recv(1, tag(1, 0), bufs[2])}
	sends := []transport.Request{eps[0].Send(1, tag(1, 0), Pattern(small, 0)), eps[0].Send(1, tag(1, 1), Pattern(LargeBytes, 1)),
		eps[1].Send(0, tag(1, 0), Pattern(small, 2))}
	for i, want := range []int{small, LargeBytes, small} {
		waitOK(t, recvs[i], want, "receive")
		waitOK(t, sends[i], want, "send")
	}
	want := [2]transport.Traffic{
		{MsgsSent: 2, BytesSent: small + LargeBytes, MsgsRecv: 1, BytesRecv: small},
		{MsgsSent: 1, BytesSent: small, MsgsRecv: 2, BytesRecv: small + LargeBytes},
	}
	awaitTraffic(t, eps, before, want)
	for r := range 2 {
		s := transport.StatsOf(eps[r])
		if s.Rank != r || len(s.Peers) != 1 {
			t.Fatalf("rank %d's stats: rank %d, %d peers, want rank %d and 1 peer: %+v", r, s.Rank, len(s.Peers), r, s)
		}
		p, ok := s.Peer(1 - r)
		if !ok || !p.Up || p.Err != "" || p.Transport == "" {
			t.Fatalf("rank %d's stats of its peer: %+v (found %v), want it up with a transport name", r, p, ok)
		}
		var was transport.Traffic
		if b, ok := before[r].Peer(1 - r); ok {
			was = b.Traffic
		}
		if got := p.Traffic.Sub(was); got != want[r] {
			t.Errorf("rank %d's traffic with rank %d: %+v, want %+v", r, 1-r, got, want[r])
		}
		checkPaths(t, r, p)
	}
}

// awaitTraffic waits, for up to waitTimeout, until both ranks count want[r] of
// traffic with each other since before: a send that completed before its
// acknowledgement (an eager send) is counted when the acknowledgement
// comes (see transport.Traffic). The caller then checks the figures.
func awaitTraffic(t *testing.T, eps []transport.Endpoint, before [2]transport.Stats, want [2]transport.Traffic) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		done := true
		for r := range 2 {
			p, _ := transport.StatsOf(eps[r]).Peer(1 - r)
			was, _ := before[r].Peer(1 - r)
			done = done && p.Traffic.Sub(was.Traffic) == want[r]
		}
		if done {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkPaths checks a peer's per-path figures, if it has any.
func checkPaths(t *testing.T, r int, p transport.PeerStats) {
	t.Helper()
	if len(p.Paths) == 0 {
		return
	}
	var bytes int64
	var share float64
	for i, pa := range p.Paths {
		if pa.Index != i || pa.State == "" || pa.Share < 0 || pa.Share > 1 {
			t.Errorf("rank %d, path %d: %+v", r, i, pa)
		}
		bytes += pa.BytesSent
		share += pa.Share
	}
	if bytes < p.BytesSent || math.Abs(share-1) > 1e-9 {
		t.Errorf("rank %d's paths to rank %d carried %d bytes with shares adding to %v; want at least the %d bytes sent and 1",
			r, p.Rank, bytes, share, p.BytesSent)
	}
}
