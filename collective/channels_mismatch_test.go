package collective

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport/inproc"
)

// Ranks whose Config.Channels differ run a ring AllReduce on rings that
// do not meet (a tree AllReduce on trees that do not); the operation header carries the channels each rank runs,
// so every rank fails at once naming the mismatch (before, most of these
// cases waited out the whole deadline), and the communicator still runs an
// AllReduce too small for more than one channel. Where the channels' effect is the
// same (two ranks have one stride; a buffer under two chunks runs one
// channel), the AllReduce succeeds with the exact sum.
func TestChannelsMismatchErrsEverywhere(t *testing.T) {
	const deadline = 20 * time.Second
	for _, n := range []int{2, 3, 4, 5, 8} {
		for _, count := range []int{1 << 10, 1 << 16, 3 << 16} { // int32, chunks of 4 KiB: 1, 64, 192
			for _, chans := range [][2]int{{1, 3}, {4, 2}} {
				for _, algo := range []Algorithm{AlgoRing, AlgoTree} {
					t.Run(fmt.Sprintf("n=%d/count=%d/channels=%d,%d/%v", n, count, chans[0], chans[1], algo), func(t *testing.T) {
						w, err := inproc.NewWorld(n)
						if err != nil {
							t.Fatal(err)
						}
						defer w.Close()
						comms := make([]*Comm, n)
						for r, ep := range w.Endpoints() {
							ch := chans[0]
							if r == 1 {
								ch = chans[1]
							}
							if comms[r], err = New(ep, 1, Config{AllReduce: algo, Channels: ch, ChunkBytes: ChunkBytesMin}); err != nil {
								t.Fatal(err)
							}
						}
						differ := len(channelStrides(n, min(chans[0], count*4/ChunkBytesMin))) !=
							len(channelStrides(n, min(chans[1], count*4/ChunkBytesMin)))
						if algo == AlgoTree {
							differ = tune.TreeChannels(chans[0], count*4, ChunkBytesMin) != tune.TreeChannels(chans[1], count*4, ChunkBytesMin)
						}
						start := time.Now()
						errs := make([]error, n)
						var wg sync.WaitGroup
						for r, c := range comms {
							wg.Go(func() {
								ctx, cancel := context.WithTimeout(context.Background(), deadline)
								defer cancel()
								x := make([]int32, count)
								for i := range x {
									x[i] = int32(r + i)
								}
								if errs[r] = AllReduce(ctx, c, x, x, Sum); errs[r] != nil {
									return
								}
								for i, v := range x {
									if want := int32(n*(n-1)/2 + n*i); v != want {
										errs[r] = fmt.Errorf("element %d: %d, want %d", i, v, want)
										return
									}
								}
							})
						}
						wg.Wait()
						took := time.Since(start)
						for r, err := range errs {
							switch {
							case !differ && err != nil:
								t.Errorf("rank %d: %v", r, err)
							case !differ:
							case err == nil:
								t.Errorf("rank %d of %d returned no error", r, n)
							case errors.Is(err, context.DeadlineExceeded):
								t.Errorf("rank %d waited out its deadline: %v", r, err)
							case !strings.Contains(err.Error(), "channels (Config.Channels)"):
								t.Errorf("rank %d's error does not name the channels: %v", r, err)
							}
						}
						if took > deadline/2 {
							t.Errorf("the AllReduce took %v", took)
						}
						// A one-element AllReduce (one channel on every rank) still works.
						wg = sync.WaitGroup{}
						for r, c := range comms {
							wg.Go(func() {
								ctx, cancel := context.WithTimeout(context.Background(), deadline)
								defer cancel()
								x := []int64{int64(r)}
								if errs[r] = AllReduce(ctx, c, x, x, Sum); errs[r] == nil && x[0] != int64(n*(n-1)/2) {
									errs[r] = fmt.Errorf("sum %d, want %d", x[0], n*(n-1)/2)
								}
							})
						}
						wg.Wait()
						for r, err := range errs {
							if err != nil {
								t.Errorf("afterwards, rank %d: %v", r, err)
							}
						}
					})
				}
			}
		}
	}
}
