package bench

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// No rank does anything after its timed calls (the CPU-time read, the
// refill for the checked calls) before every rank has ended its own: a
// rank held 50 ms at the end of its loop is seen ended by every other
// rank's next step, in every measurement.
func TestMeasureWaitsForEveryRankToEnd(t *testing.T) {
	var mu sync.Mutex
	ended := map[int]int{} // measurements whose timed calls rank 0 has ended
	seen := map[int]int{}  // steps after the timed calls, per rank
	var early []int
	endHook = func(rank int, allEnded bool) {
		switch {
		case !allEnded && rank == 0:
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			ended[0]++
			mu.Unlock()
		case allEnded:
			mu.Lock()
			seen[rank]++
			if seen[rank] > ended[0] {
				early = append(early, rank)
			}
			mu.Unlock()
		}
	}
	t.Cleanup(func() { endHook = nil })
	code, _, errOut := runBench(t, withQuick("alltoall,allreduce", "--transport", "inproc", "-np", "3")...)
	require.Equal(t, ExitOK, code, errOut)
	require.Empty(t, early, "ranks that went on before rank 0 ended its timed calls")
	require.Positive(t, ended[0])
	for r := range 3 {
		require.Equal(t, ended[0], seen[r], "rank %d", r)
	}
}
