package simnet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/simnet"
)

func grid(t testing.TB, sites, hosts, ranks int) topology.Topology {
	var rs []topology.RankInfo
	for s := range sites {
		for h := range hosts {
			for l := range ranks {
				rs = append(rs, topology.RankInfo{Rank: len(rs), Host: fmt.Sprintf("s%dh%d", s, h), Site: fmt.Sprintf("s%d", s), LocalRank: l})
			}
		}
	}
	tp, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestOneTransfer: a message between hosts takes the LAN's latency plus
// its bytes over the LAN's bandwidth, in virtual time.
func TestOneTransfer(t *testing.T) {
	links := tune.DefaultLinks()
	w, err := simnet.NewWorld(grid(t, 1, 2, 1), links)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eps := w.Endpoints()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 1 << 20
	tag := transport.Tag{Seq: 1}
	buf := make([]byte, n)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := eps[0].Send(1, tag, make([]byte, n)).Wait(ctx); err != nil {
			t.Error(err)
		}
		_ = eps[0].Close()
	})
	if _, err := eps[1].Recv(0, tag, buf).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	want := links.Site.Latency + time.Duration(float64(n)/links.Site.Bandwidth*1e9)
	if got := w.Now(); got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("virtual time %v, want %v", got, want)
	}
}

// TestCollectiveTable runs part of the collectives' table over the
// simulated fabric: results must be exact whatever the timing.
func TestCollectiveTable(t *testing.T) {
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		w, err := simnet.NewWorld(grid(t, 1, n, 1), tune.DefaultLinks())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		w.AdvanceIdle(2 * time.Millisecond)
		return w.Endpoints()
	}
	collectivetest.Run(t, newWorld, collectivetest.Options{
		Sizes:  []int{1, 3, 4},
		Counts: []int{0, 7, 1023},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Int8},
		Ops:    []reduce.Op{reduce.Sum, reduce.Avg},
	})
}

// TestAgainstModel runs AllReduce with each algorithm on 2 sites x 2 hosts
// x 2 ranks and prints the virtual time beside the cost model's.
func TestAgainstModel(t *testing.T) {
	topo := grid(t, 2, 2, 2)
	links := tune.DefaultLinks()
	const size = 4 << 20
	pred, err := tune.Predict(tune.AllReduce, tune.Input{Topology: topo, Bytes: size, ChunkBytes: 512 << 10, Links: links})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pred {
		algo, _ := collective.ParseAlgorithm(p.Algorithm)
		w, err := simnet.NewWorld(topo, links)
		if err != nil {
			t.Fatal(err)
		}
		eps := w.Endpoints()
		var wg sync.WaitGroup
		for r, ep := range eps {
			wg.Go(func() {
				defer ep.Close()
				c, err := collective.New(ep, 1, collective.Config{AllReduce: algo, Topology: &topo, ChunkBytes: 512 << 10})
				if err != nil {
					t.Error(err)
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				x := make([]float32, size/4)
				for i := range x {
					x[i] = float32(r)
				}
				if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
					t.Error(err)
					return
				}
				if x[0] != 28 || x[len(x)-1] != 28 {
					t.Errorf("rank %d: %v", r, x[0])
				}
			})
		}
		wg.Wait()
		t.Logf("%-20s simulated %-12v model %v", p.Algorithm, w.Now(), p.Time)
	}
}
