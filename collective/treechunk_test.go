package collective

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport/inproc"
)

// TestTreePartsPipeline: a forced-tree AllReduce whose trees' parts are
// one or two of the communicator's chunks moves them in at least
// tune.TreeChunksMin chunks (tune.TreeChunk), so that the tree pipelines;
// a part already of many chunks keeps the communicator's. Before, a part
// of one chunk crossed every edge whole (largest message 64 KiB here).
func TestTreePartsPipeline(t *testing.T) {
	const chunk = 64 << 10
	for _, tc := range []struct {
		count       int // float32s
		wantLargest int
	}{
		{count: 2 * chunk / 4, wantLargest: chunk / 8},   // parts of 64 KiB (1 chunk): chunks of 8 KiB
		{count: 4 * chunk / 4, wantLargest: chunk / 4},   // parts of 128 KiB (2 chunks): 16 KiB
		{count: 32 * chunk / 4, wantLargest: chunk},      // parts of 16 chunks: the communicator's
		{count: chunk / 4 / 32, wantLargest: chunk / 64}, // parts of 1 KiB, under the floor (a 16th of a chunk): whole
	} {
		if got := tune.TreeChunk(tc.count*4/2, chunk); got < tc.wantLargest {
			t.Fatalf("TreeChunk(%d, %d) = %d, below %d", tc.count*2, chunk, got, tc.wantLargest)
		}
		const n = 4
		w, err := inproc.NewWorld(n)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		largest := 0
		comms := make([]*Comm, n)
		for r, ep := range w.Endpoints() {
			if comms[r], err = New(&flowEndpoint{Endpoint: ep, rank: r, mu: &mu, flows: map[[2]int]int{}, largest: &largest}, 1,
				Config{AllReduce: AlgoTree, Channels: 1, ChunkBytes: chunk}); err != nil {
				t.Fatal(err)
			}
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r, c := range comms {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				x := make([]float32, tc.count)
				for i := range x {
					x[i] = float32(r + i%7)
				}
				if errs[r] = AllReduce(ctx, c, x, x, Sum); errs[r] != nil {
					return
				}
				for i, v := range x {
					if want := float32(n*(n-1)/2 + n*(i%7)); v != want {
						t.Errorf("rank %d, element %d: %v, want %v", r, i, v, want)
						return
					}
				}
			})
		}
		wg.Wait()
		w.Close()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("count %d, rank %d: %v", tc.count, r, err)
			}
		}
		if largest != tc.wantLargest {
			t.Errorf("count %d (parts of %d B, chunk %d B): largest data message %d B, want %d", tc.count, tc.count*2, chunk, largest, tc.wantLargest)
		}
	}
}
