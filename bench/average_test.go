package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/inproc"
)

// -a: rank r's times are r+1 and 10(r+1) µs; every rank gets the ones
// the mode asks for.
func TestAverageTimes(t *testing.T) {
	const n = 4
	for mode, want := range map[int][2]float64{
		AverageRank0: {1, 10}, AverageMean: {2.5, 25}, AverageMin: {1, 10}, AverageMax: {4, 40},
	} {
		w, err := inproc.NewWorld(n)
		require.NoError(t, err)
		var g errgroup.Group
		got := make([][]float64, n)
		for r, ep := range w.Endpoints() {
			g.Go(func() error {
				c, err := collective.New(ep, 0, collective.Config{})
				if err != nil {
					return err
				}
				m := &member{comm: c, plan: &plan{average: mode}}
				got[r] = []float64{float64(r + 1), float64(10 * (r + 1))}
				return m.averageTimes(context.Background(), got[r])
			})
		}
		require.NoError(t, g.Wait(), "-a %d", mode)
		for r := range n {
			require.Equal(t, want[:], got[r], "-a %d, rank %d", mode, r)
		}
		require.NoError(t, w.Close())
	}
}

func TestAverageFlag(t *testing.T) {
	o, err := ParseArgs([]string{"allreduce", "-a", "1"})
	require.NoError(t, err)
	require.Equal(t, AverageMean, o.Average)
	require.Equal(t, AverageMax, DefaultOptions().Average)
	_, err = ParseArgs([]string{"allreduce", "-a", "4"})
	require.EqualError(t, err, "-a 4: want 0 (rank 0), 1 (mean), 2 (min) or 3 (max)")
}

// -N 2 runs the sweep twice; -N 0 until ctx ends, which returns
// ExitInterrupted with one line.
func TestRunCycles(t *testing.T) {
	args := []string{"allreduce", "--transport", "inproc", "-np", "2", "--sizes", "1K,4K", "-n", "1", "--json"}
	code, once, errOut := runBench(t, args...)
	require.Equal(t, ExitOK, code, errOut)
	code, twice, errOut := runBench(t, append(args, "-N", "2")...)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, 2*strings.Count(once, "\n"), strings.Count(twice, "\n"))
	require.Len(t, decodeRows(t, twice), 2*len(decodeRows(t, once)))

	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	out := &cancelAfter{lines: 5, cancel: func() { cancel(errors.New("enough")) }}
	var errBuf bytes.Buffer
	code = Main(ctx, append(args, "-N", "0"), out, &errBuf)
	require.Equal(t, ExitInterrupted, code)
	require.Equal(t, "gocoll bench: interrupted (enough)\n", errBuf.String())
	require.GreaterOrEqual(t, out.seen, 5)

	_, err := ParseArgs([]string{"allreduce", "-N", "-1"})
	require.EqualError(t, err, "-N -1: want a number of cycles, or 0 to run until stopped")
}

// cancelAfter calls cancel once it has been written lines lines.
type cancelAfter struct {
	mu     sync.Mutex
	lines  int
	seen   int
	cancel func()
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen += bytes.Count(p, []byte("\n"))
	if c.seen >= c.lines {
		c.cancel()
	}
	return len(p), nil
}
