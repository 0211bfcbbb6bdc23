package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/tcp"
)

// Rank 0 sends 1 MiB of float32 to rank 1 over TCP; each side's Stats
// then show the bytes it moved with its peer: the payload, and the 32-byte
// operation headers by which the ranks check that their calls match.
func ExampleComm_Stats() {
	ctx := context.Background()
	eps, err := tcp.NewLocalWorld(ctx, 2, tcp.Config{})
	if err != nil {
		panic(err)
	}
	comms := make([]*collective.Comm, 2)
	for r, ep := range eps {
		defer ep.Close()
		if comms[r], err = collective.New(ep, 0, collective.Config{}); err != nil {
			panic(err)
		}
	}
	buf := make([]float32, 1<<18)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := collective.Send(ctx, comms[0], buf, 1); err != nil {
			panic(err)
		}
	})
	if err := collective.Recv(ctx, comms[1], buf, 0); err != nil {
		panic(err)
	}
	wg.Wait()
	for _, c := range comms {
		s := c.Stats() // a copy: print, keep or subtract it
		for _, p := range s.Peers {
			fmt.Printf("rank %d with rank %d over %s: sent %d bytes in %d messages, received %d in %d\n",
				s.Rank, p.Rank, p.Transport, p.BytesSent, p.MsgsSent, p.BytesRecv, p.MsgsRecv)
		}
	}
	// Output:
	// rank 0 with rank 1 over tcp: sent 1048608 bytes in 2 messages, received 32 in 1
	// rank 1 with rank 0 over tcp: sent 32 bytes in 1 messages, received 1048608 in 2
}

// TestStatsSplit checks that a communicator from Split reports its own
// members only, by their ranks in it.
func TestStatsSplit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eps, err := tcp.NewLocalWorld(ctx, 3, tcp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	subs := make([]*collective.Comm, 3)
	var g errgroup.Group
	for r, ep := range eps {
		t.Cleanup(func() { _ = ep.Close() })
		g.Go(func() error {
			c, err := collective.New(ep, 0, collective.Config{})
			if err != nil {
				return err
			}
			subs[r], err = c.Split(ctx, r%2, 0)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	s := subs[2].Stats() // world rank 2 is rank 1 of {0, 2}
	if s.Rank != 1 || len(s.Peers) != 1 || s.Peers[0].Rank != 0 || s.Peers[0].Transport != transport.StatsTCP {
		t.Fatalf("rank 2's stats in {0, 2}: %+v; want rank 1 with one peer, rank 0 over tcp", s)
	}
	if s.Peers[0].MsgsSent == 0 {
		t.Errorf("no messages counted to world rank 0, though Split exchanged some: %+v", s.Peers[0])
	}
}
