package route_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/route"
	"github.com/gocoll/gocoll/transport/tcp"
)

// Each peer's statistics come from the transport that reaches it: over
// two TCP worlds, rank 0 reaches rank 1 through the first and rank 2
// through the second, and its figures for each are that transport's.
func TestStatsPerPeerTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var worlds [2][]*tcp.Endpoint
	for i := range worlds {
		eps, err := tcp.NewLocalWorld(ctx, 3, tcp.Config{})
		if err != nil {
			t.Fatal(err)
		}
		worlds[i] = eps
	}
	via := func(a, b int) int { // which world joins ranks a and b
		if a+b == 1 {
			return 0
		}
		return 1
	}
	eps := make([]*route.Endpoint, 3)
	for r := range eps {
		byPeer := make([]transport.Endpoint, 3)
		for p := range byPeer {
			byPeer[p] = worlds[via(r, p)][r]
		}
		ep, err := route.New(byPeer)
		if err != nil {
			t.Fatal(err)
		}
		eps[r] = ep
		t.Cleanup(func() { _ = ep.Close() })
	}
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	for _, p := range []int{1, 2} {
		recv := eps[p].Recv(0, tag, make([]byte, 100*p))
		send := eps[0].Send(p, tag, make([]byte, 100*p))
		for _, r := range []transport.Request{recv, send} {
			if _, err := r.Wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := transport.StatsOf(eps[0])
	if len(s.Peers) != 2 {
		t.Fatalf("rank 0's stats: %+v, want peers 1 and 2", s)
	}
	for i, p := range s.Peers {
		want := transport.Traffic{MsgsSent: 1, BytesSent: int64(100 * (i + 1))}
		if p.Rank != i+1 || p.Transport != transport.StatsTCP || p.Traffic != want {
			t.Errorf("rank 0's stats of peer %d: %+v, want rank %d over tcp with %+v", i+1, p, i+1, want)
		}
	}
}
