package collective

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// flowEndpoint records the data bytes its rank sends to each peer (a
// header message's carried bytes included, the header itself not) and,
// where largest is set, the largest such message.
type flowEndpoint struct {
	transport.Endpoint
	rank    int
	mu      *sync.Mutex
	flows   map[[2]int]int
	largest *int
}

func (e *flowEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	n := len(buf)
	if tag.Seq == 0 {
		n = max(0, n-headerLen)
	}
	if n > 0 {
		e.mu.Lock()
		e.flows[[2]int{e.rank, peer}] += n
		if e.largest != nil {
			*e.largest = max(*e.largest, n)
		}
		e.mu.Unlock()
	}
	return e.Endpoint.Send(peer, tag, buf)
}

// TestSmallRootedFlowsAreBinomial checks that the small Broadcast and
// Scatter (disseminations) move their data as the binomial tree the cost
// model prices (tune's binomial: farthest first, rank v sending to v+d
// when v is a multiple of 2d), at every root of 2 to 9 ranks: the same
// pairs, and, for the Scatter, the blocks of the subtree below each
// receiver.
func TestSmallRootedFlowsAreBinomial(t *testing.T) {
	for n := 2; n <= 9; n++ {
		w, err := inproc.NewWorld(n)
		require.NoError(t, err)
		var mu sync.Mutex
		flows := map[[2]int]int{}
		comms := make([]*Comm, n)
		for r, ep := range w.Endpoints() {
			comms[r], err = New(&flowEndpoint{Endpoint: ep, rank: r, mu: &mu, flows: flows}, 1, Config{})
			require.NoError(t, err)
		}
		const bs = 8
		for root := range n {
			want := map[[2]int]int{}
			wantScatter := map[[2]int]int{}
			for d := topDistance(n); d > 0; d >>= 1 {
				for v := 0; v+d < n; v += 2 * d {
					pair := [2]int{(v + root) % n, (v + d + root) % n}
					want[pair] = bs
					wantScatter[pair] = (min(v+2*d, n) - (v + d)) * bs
				}
			}
			for _, kind := range []string{"Broadcast", "Scatter"} {
				mu.Lock()
				clear(flows)
				mu.Unlock()
				errs := runAll(n, func(ctx context.Context, r int) error {
					if kind == "Broadcast" {
						return comms[r].broadcast(ctx, make([]byte, bs), make([]byte, bs), dtype.Uint8, root, true).Wait(ctx)
					}
					return comms[r].scatter(ctx, make([]byte, n*bs), make([]byte, bs), dtype.Uint8, root, true).Wait(ctx)
				})
				for r, err := range errs {
					require.NoError(t, err, "%s n=%d root=%d rank %d", kind, n, root, r)
				}
				expect := want
				if kind == "Scatter" {
					expect = wantScatter
				}
				mu.Lock()
				got := maps.Clone(flows)
				mu.Unlock()
				require.Equal(t, expect, got, fmt.Sprintf("%s n=%d root=%d: data bytes by (from, to)", kind, n, root))
			}
		}
		for _, c := range comms {
			_ = c.Close()
		}
		_ = w.Close()
	}
}

// TestReduceModelBinomialInlineOnly checks that where the cost model picks
// the binomial tree for a Reduce, it runs as a recursive doubling only
// while the buffer travels inline with the headers (the model prices n-1
// messages of the buffer; a recursive doubling sends n*log2(n)), and as the
// binomial tree above; and that the sizes tried do reach a binomial pick.
func TestReduceModelBinomialInlineOnly(t *testing.T) {
	w, err := inproc.NewWorld(8)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	c, err := New(w.Endpoints()[0], 1, Config{Topology: gridTopology(t, 2, 2, 2)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sawBinomial := false
	for _, bytes := range []int{8, 256, inlineBytesMax, inlineBytesMax + 8, 4096, 32 << 10} {
		model, got := c.modelAlgorithm(KindReduce, bytes, 0), c.reduceAlgorithm(bytes, 0)
		want := model
		if model == AlgoBinomial && bytes <= inlineBytesMax {
			want = AlgoRecursiveDoubling
		}
		if model == AlgoAuto {
			want = AlgoRecursiveDoubling // at or below SmallBytes
		}
		sawBinomial = sawBinomial || (model == AlgoBinomial && bytes > inlineBytesMax)
		require.Equal(t, want, got, "%d bytes (model: %v)", bytes, model)
	}
	require.True(t, sawBinomial, "the model picked the binomial tree at no size above the inline limit")
}
