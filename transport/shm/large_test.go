//go:build linux

package shm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestLargeRendezvousPerPeer checks that a large direct Broadcast and an
// AllToAll move each byte in one rendezvous per receiver and block: the
// root of a 4 MiB Broadcast sends 3 (not one per 512 KiB chunk), every
// rank of an AllToAll sends n-1, and the results are right, the
// out-of-place root's own recv (filled after its sends) included.
func TestLargeRendezvousPerPeer(t *testing.T) {
	const n, size, root = 4, 4 << 20, 1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*collective.Comm, n)
	for r, ep := range eps {
		t.Cleanup(func() { _ = ep.Close() })
		if comms[r], err = collective.New(ep, 1, collective.Config{Broadcast: collective.AlgoDirect}); err != nil {
			t.Fatal(err)
		}
	}
	all := func(f func(r int) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for r := range n {
			wg.Go(func() { errs[r] = f(r) })
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	sent := func() []uint64 {
		out := make([]uint64, n)
		for r, ep := range eps {
			out[r] = ep.Stats().RendezvousSent
		}
		return out
	}

	send, recv := make([][]byte, n), make([][]byte, n)
	for r := range n {
		send[r], recv[r] = make([]byte, size), make([]byte, size)
		for i := range send[r] {
			send[r][i] = byte(i*7 + r)
		}
	}
	before := sent()
	all(func(r int) error { return comms[r].BroadcastBytes(ctx, send[r], recv[r], dtype.Uint8, root) })
	after := sent()
	if got := after[root] - before[root]; got != n-1 {
		t.Errorf("direct Broadcast of %d bytes: root sent %d rendezvous, want %d (one per receiver)", size, got, n-1)
	}
	for r := range n {
		for i, b := range recv[r] {
			if want := byte(i*7 + root); b != want {
				t.Fatalf("Broadcast: rank %d byte %d = %d, want %d", r, i, b, want)
			}
		}
	}

	before = sent()
	all(func(r int) error { return comms[r].AllToAllBytes(ctx, send[r], recv[r], dtype.Uint8) })
	after = sent()
	block := size / n
	for r := range n {
		if got := after[r] - before[r]; got != n-1 {
			t.Errorf("AllToAll: rank %d sent %d rendezvous, want %d", r, got, n-1)
		}
		for p := range n {
			for i := range block {
				if got, want := recv[r][p*block+i], byte((r*block+i)*7+p); got != want {
					t.Fatalf("AllToAll: rank %d byte %d of block %d = %d, want %d", r, i, p, got, want)
				}
			}
		}
	}
}
