package mrtransport

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// virtualLink is a 10 Gbit/s link with 5 µs of delay, jitter, and every
// kind of fault.
var virtualLink = simfabric.LinkConfig{Rate: 1_250_000_000, Delay: 5 * time.Microsecond, Jitter: 2 * time.Microsecond,
	Loss: 0.02, Dup: 0.01, Corrupt: 0.005, Reorder: 0.02}

// TestVirtualTimeCollectives runs collectives over MetaRoCE on a lossy,
// reordering simulated fabric inside a testing/synctest bubble, so the
// engine's timers, the fabric's delays and the collectives' deadlines all
// run on the bubble's virtual clock. (The collectivetest table cannot run in
// a bubble, which forbids t.Run; this is its core in a flat loop.) Each
// result is checked against a reference computed here.
func TestVirtualTimeCollectives(t *testing.T) {
	for _, size := range []int{2, 3, 5} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := Config{Paths: 4, MaxDatagram: 1452, Core: metaroce.Config{IDSeed: 1}}
			eps, net, err := NewSimWorld(ctx, size, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(size)}, Link: virtualLink})
			if err != nil {
				t.Fatal(err)
			}
			algos := []collective.Algorithm{collective.AlgoRing, collective.AlgoRecursiveDoubling}
			for ai, algo := range algos {
				comms := make([]*collective.Comm, size)
				for r, ep := range eps {
					comms[r], err = collective.New(ep, uint64(10+ai), collective.Config{AllReduce: algo, ChunkBytes: 16 << 10})
					if err != nil {
						t.Fatal(err)
					}
				}
				for _, count := range []int{0, 1, 7, 1023, 65539} {
					if err := runVirtualCase(ctx, comms, count); err != nil {
						t.Fatalf("n=%d %v count=%d: %v", size, algo, count, err)
					}
				}
			}
			var lost, corrupted int64
			for _, l := range net.Stats().Links {
				lost += l.DroppedLoss.Packets
				corrupted += l.Corrupted.Packets
			}
			t.Logf("n=%d: %v of virtual time; fabric lost %d and corrupted %d datagrams", size, time.Since(start), lost, corrupted)
			if lost == 0 || corrupted == 0 {
				t.Fatalf("the fabric lost %d and corrupted %d datagrams; want both", lost, corrupted)
			}
			for _, ep := range eps {
				if err := ep.Close(); err != nil {
					t.Fatal(err)
				}
			}
			net.Close()
		})
	}
}

// runVirtualCase runs AllReduce, Broadcast, AllGather and AllToAll of
// count int32 elements on every rank and checks the results.
func runVirtualCase(ctx context.Context, comms []*collective.Comm, count int) error {
	n := len(comms)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() { errs[r] = virtualRank(ctx, c, r, n, count) })
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return nil
}

func virtualRank(ctx context.Context, c *collective.Comm, r, n, count int) error {
	val := func(rank, i int) int32 { return int32(rank*7919 + i) }
	in := make([]int32, count)
	for i := range in {
		in[i] = val(r, i)
	}
	out := make([]int32, count)
	if err := collective.AllReduce(ctx, c, in, out, collective.Sum); err != nil {
		return err
	}
	for i, v := range out {
		want := int32(0)
		for q := range n {
			want += val(q, i)
		}
		if v != want {
			return fmt.Errorf("AllReduce[%d] = %d, want %d", i, v, want)
		}
	}
	root := count % n
	bc := make([]int32, count)
	if err := collective.Broadcast(ctx, c, in, bc, root); err != nil {
		return err
	}
	for i, v := range bc {
		if v != val(root, i) {
			return fmt.Errorf("Broadcast[%d] = %d, want %d", i, v, val(root, i))
		}
	}
	all := make([]int32, n*count)
	if err := collective.AllGather(ctx, c, in, all); err != nil {
		return err
	}
	for i, v := range all {
		if v != val(i/max(count, 1), i%max(count, 1)) {
			return fmt.Errorf("AllGather[%d] = %d", i, v)
		}
	}
	a2a := make([]int32, n*count)
	send := make([]int32, n*count)
	for i := range send {
		send[i] = val(r, i)
	}
	if err := collective.AllToAll(ctx, c, send, a2a); err != nil {
		return err
	}
	for i, v := range a2a {
		q, k := i/max(count, 1), i%max(count, 1)
		if want := val(q, r*count+k); v != want {
			return fmt.Errorf("AllToAll[%d] = %d, want %d", i, v, want)
		}
	}
	return c.Barrier(ctx)
}
