package mrtransport

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// A port unreachable drawn before a late rank's socket opened, read only
// after the connection to it is up (as a reader on a loaded host does),
// does not fail the connection to that live rank: the report makes the
// core probe it, and its answer cancels the report. Over the simulated
// fabric in virtual time, the stale report injected where the engine hands
// the error queue's findings to the core.
func TestStalePortUnreachableKeepsConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		eps, net, err := NewSimWorld(ctx, 2, Config{Paths: 2, Core: metaroce.Config{IDSeed: 1}}, SimConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		defer func() {
			for _, ep := range eps {
				_ = ep.Close()
			}
		}()
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 1}}
		buf := make([]byte, 100)
		recv := eps[0].Recv(1, tag, buf)
		eps[0].eng.lock()
		addr := eps[0].peers[1].addrs[1]
		eps[0].eng.unlock()
		eps[0].eng.handleRefused([]netip.AddrPort{addr})
		if got := eps[0].Stats().Engine.PeerGone; got != 1 {
			t.Fatalf("the report named no open connection (PeerGone %d)", got)
		}
		time.Sleep(4 * metaroce.PeerGoneGrace)
		eps[0].eng.lock()
		up, perr := eps[0].peers[1].up, eps[0].peers[1].err
		eps[0].eng.unlock()
		if !up {
			t.Fatalf("the connection to the live rank failed on a stale port unreachable: %v", perr)
		}
		if _, err := eps[1].Send(0, tag, transporttest.Pattern(100, 5)).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := recv.Wait(ctx); err != nil {
			t.Fatalf("receive pending across the stale report: %v", err)
		}
		if err := transporttest.Verify(buf, 5); err != nil {
			t.Fatal(err)
		}
	})
}
