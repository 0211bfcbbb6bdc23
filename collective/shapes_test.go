package collective

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/inproc"
)

// TestShapeCacheBounded: a rooted tree operation whose root rotates over
// every rank keeps at most rootedShapes sets of shapes on each rank, and
// AllReduce's stay kept throughout. First over Comm.trees at 64 ranks on
// 1 and 2 channels (before, one set per root and channel count: 130),
// then through forced-tree Broadcasts and Reduces at every root of 12
// ranks, whose results are checked.
func TestShapeCacheBounded(t *testing.T) {
	const n = 64
	w, err := inproc.NewWorld(n)
	require.NoError(t, err)
	defer w.Close()
	c, err := New(w.Endpoints()[0], 1, Config{})
	require.NoError(t, err)
	all := [3][]treeShape{nil, c.trees(-1, 1), c.trees(-1, 2)}
	for root := range n {
		for ch := 1; ch <= 2; ch++ {
			s := c.trees(root, ch)
			require.Equal(t, root, s[0].root)
			require.Len(t, s, 2*ch)
			require.Same(t, &s[0], &c.trees(root, ch)[0], "root %d, %d channels: not kept while in use", root, ch)
			require.Same(t, &all[ch][0], &c.trees(-1, ch)[0], "AllReduce's shapes on %d channels not kept", ch)
		}
		require.LessOrEqual(t, c.shapes.kept(), 2+rootedShapes, "after root %d", root)
	}
	require.Equal(t, 2+rootedShapes, c.shapes.kept())

	const m = 12
	w2, err := inproc.NewWorld(m)
	require.NoError(t, err)
	defer w2.Close()
	comms := make([]*Comm, m)
	for r, ep := range w2.Endpoints() {
		comms[r], err = New(ep, 1, Config{Broadcast: AlgoTree, Reduce: AlgoTree, ChunkBytes: ChunkBytesMin})
		require.NoError(t, err)
	}
	const count = 4 * ChunkBytesMin / 4
	for root := range m {
		errs := runAll(m, func(ctx context.Context, r int) error {
			buf := make([]float32, count)
			if r == root {
				buf[count-1] = float32(root + 1)
			}
			if err := Broadcast(ctx, comms[r], buf, buf, root); err != nil {
				return err
			}
			if got := buf[count-1]; got != float32(root+1) {
				return fmt.Errorf("Broadcast: %v, want %v", got, root+1)
			}
			recv := make([]float32, count)
			if err := Reduce(ctx, comms[r], buf, recv, Sum, root); err != nil {
				return err
			}
			if got := recv[count-1]; r == root && got != float32(m*(root+1)) {
				return fmt.Errorf("Reduce: %v, want %v", got, m*(root+1))
			}
			return nil
		})
		for r, err := range errs {
			require.NoError(t, err, "rank %d, root %d", r, root)
		}
	}
	for r, c := range comms {
		require.LessOrEqual(t, c.shapes.kept(), rootedShapes, "rank %d after every root", r)
	}
}
