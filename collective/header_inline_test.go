package collective

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInlineLimitMessages checks that a pair's first data message rides
// with the operation header up to inlineBytesMax bytes and goes on its own
// above: 4 ranks, an AllReduce (recursive doubling: 2 rounds, the whole
// buffer each) and an AllToAll (3 peers, a block each), at the largest
// inline size and one element above, counting the fewest sends of one
// operation per rank (a wait of a millisecond may send headers ahead).
func TestInlineLimitMessages(t *testing.T) {
	const n, ops = 4, 10
	for _, tc := range []struct {
		name  string
		bytes int // per message
		run   func(ctx context.Context, c *Comm, bytes int) error
		msgs  int // messages per rank: rounds or peers
	}{
		{"AllReduce", inlineBytesMax, func(ctx context.Context, c *Comm, bytes int) error {
			x := make([]int32, bytes/4)
			return AllReduce(ctx, c, x, x, Sum)
		}, 2},
		{"AllToAll", inlineBytesMax, func(ctx context.Context, c *Comm, bytes int) error {
			return AllToAll(ctx, c, make([]int32, n*bytes/4), make([]int32, n*bytes/4))
		}, n - 1},
	} {
		for _, above := range []bool{false, true} {
			bytes := tc.bytes + 4*b2i(above)
			t.Run(fmt.Sprintf("%s/%dB", tc.name, bytes), func(t *testing.T) {
				comms, eps := countingComms(t, n)
				fewest := make([]int64, n)
				errs := runAll(n, func(ctx context.Context, r int) error {
					fewest[r] = 1 << 62
					for range ops {
						before := eps[r].sends.Load()
						if err := tc.run(ctx, comms[r], bytes); err != nil {
							return err
						}
						fewest[r] = min(fewest[r], eps[r].sends.Load()-before)
					}
					return nil
				})
				want := tc.msgs * (1 + b2i(above)) // a header message and a data message each above
				for r := range n {
					require.NoError(t, errs[r], "rank %d", r)
					require.EqualValues(t, want, fewest[r], "rank %d: fewest sends of one operation", r)
				}
			})
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
