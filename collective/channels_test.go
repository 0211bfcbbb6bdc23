package collective

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

func TestChannelStrides(t *testing.T) {
	cases := []struct {
		n, c int
		want []int
	}{
		{2, 4, []int{1}},
		{3, 4, []int{1, 2}},
		{4, 4, []int{1, 3}},
		{5, 3, []int{1, 4, 2}},
		{6, 4, []int{1, 5}},
		{9, 16, []int{1, 8, 2, 7, 4, 5}},
	}
	for _, tc := range cases {
		if got := channelStrides(tc.n, tc.c); !slices.Equal(got, tc.want) {
			t.Errorf("channelStrides(%d, %d) = %v, want %v", tc.n, tc.c, got, tc.want)
		}
	}
}

// TestChannelsAllReduce: a ring AllReduce on 1 to 4 channels (as many as
// the world size has strides) sums exactly, in and out of place, with a
// count that leaves the channels' parts and segments uneven.
func TestChannelsAllReduce(t *testing.T) {
	const count = 30011 // int32: 29 chunks of 4 KiB
	for _, n := range []int{2, 3, 4, 5, 8} {
		for _, ch := range []int{1, 2, 3, 4} {
			t.Run(fmt.Sprintf("n=%d/channels=%d", n, ch), func(t *testing.T) {
				w, err := inproc.NewWorld(n)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				want := make([]int32, count)
				for i := range want {
					for r := range n {
						want[i] += int32(i*(r+1) - 7*r)
					}
				}
				var wg sync.WaitGroup
				errs := make([]error, n)
				for r, ep := range w.Endpoints() {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[r] = func() error {
							c, err := New(ep, 1, Config{AllReduce: AlgoRing, Channels: ch, ChunkBytes: ChunkBytesMin})
							if err != nil {
								return err
							}
							defer c.Close()
							ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
							defer cancel()
							in := make([]int32, count)
							for i := range in {
								in[i] = int32(i*(r+1) - 7*r)
							}
							out := make([]int32, count)
							if err := AllReduce(ctx, c, in, out, Sum); err != nil {
								return err
							}
							if err := AllReduce(ctx, c, in, in, Sum); err != nil {
								return err
							}
							for i := range want {
								if out[i] != want[i] || in[i] != want[i] {
									return fmt.Errorf("element %d: %d out of place, %d in place, want %d", i, out[i], in[i], want[i])
								}
							}
							return nil
						}()
					}()
				}
				wg.Wait()
				for r, err := range errs {
					if err != nil {
						t.Fatalf("rank %d: %v", r, err)
					}
				}
			})
		}
	}
	if _, err := (Config{Channels: ChannelsMax + 1}).withDefaults(transport.Traits{}); err == nil {
		t.Errorf("Channels %d accepted", ChannelsMax+1)
	}
}
