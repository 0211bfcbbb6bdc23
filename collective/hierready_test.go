package collective

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// TestHierNextLooksAtFewReceives: the pipelined hierarchical AllReduce of
// 2 MiB in 4 KiB chunks on 2 sites x 2 hosts x 4 ranks (about 1,000
// receives a rank, hundreds posted ahead) looks at a few receives per
// receive it takes, not at every posted one each time: next examines only
// each sender's first ready receive (hierready.go), of at most 3 here.
// When next walked every posted receive (and its dependencies) per call,
// the ranks looked at 32 and 53 per receive taken (two runs of this test
// on that code, instrumented alike). The sums are checked too.
func TestHierNextLooksAtFewReceives(t *testing.T) {
	const ranks, count = 16, 1 << 19 // float32: 2 MiB
	topo := gridTopology(t, 2, 2, 4)
	w, err := inproc.NewWorld(ranks)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var mu sync.Mutex
	var looks, recvs, pipes int
	hierPipeRan = func(p *hierPipe) {
		mu.Lock()
		defer mu.Unlock()
		looks += p.rdy.looks
		recvs += len(p.recvs)
		pipes++
	}
	defer func() { hierPipeRan = nil }()
	runHierAllReduceChecked(t, w, topo, count)
	if pipes != ranks {
		t.Fatalf("%d ranks ran the pipeline, want %d", pipes, ranks)
	}
	per := float64(looks) / float64(recvs)
	t.Logf("%d receives in all, %d looked at: %.2f a receive", recvs, looks, per)
	if per > 4 {
		t.Errorf("next looked at %.1f receives per receive taken, want at most 4", per)
	}
}

// runHierAllReduceChecked runs one hierarchical AllReduce of count
// float32 (in chunks of ChunkBytesMin, topology topo) on every endpoint
// of w at once, rank r's element i being r + i%7, and checks every sum.
func runHierAllReduceChecked(t *testing.T, w *inproc.World, topo *topology.Topology, count int) {
	t.Helper()
	eps := w.Endpoints()
	ranks := len(eps)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			c, err := New(ep, 1, Config{AllReduce: AlgoHierarchical, Topology: topo, ChunkBytes: ChunkBytesMin})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			buf := make([]float32, count)
			for i := range buf {
				buf[i] = float32(r + i%7)
			}
			if err := AllReduce(ctx, c, buf, buf, Sum); err != nil {
				t.Errorf("rank %d: %v", r, err)
				return
			}
			for i, v := range buf {
				if want := float32(ranks*(ranks-1)/2 + ranks*(i%7)); v != want {
					t.Errorf("rank %d: element %d is %v, want %v", r, i, v, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
