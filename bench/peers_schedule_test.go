package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// PeersLoops follows mpi_coll_bench.c's schedule() in ../shared/peers.
func TestPeersLoops(t *testing.T) {
	cases := []struct {
		bytes         int64
		scale         float64
		warmup, iters int
	}{
		{8, 1, 50, 1000}, {1024, 1, 50, 1000}, {1025, 1, 20, 200}, {65536, 1, 20, 200},
		{65537, 1, 5, 50}, {1 << 20, 1, 5, 50}, {1<<20 + 4, 1, 2, 10}, {16 << 20, 1, 2, 10},
		{64 << 20, 1, 2, 5}, {8, 100, 50, 100000}, {64 << 20, 0.1, 1, 1}, {8, 0.01, 1, 10},
		{65536, 0.5, 10, 100},
	}
	for _, c := range cases {
		w, i := PeersLoops(c.bytes, c.scale)
		require.Equal(t, [2]int{c.warmup, c.iters}, [2]int{w, i}, "%d bytes at scale %g", c.bytes, c.scale)
	}
}

func TestPeersScheduleOption(t *testing.T) {
	o, err := ParseArgs([]string{"allreduce", "--sizes", "8,65536", "--peers-schedule", "2"})
	require.NoError(t, err)
	p, err := newPlan(o, 4)
	require.NoError(t, err)
	w, i := p.loops(8)
	require.Equal(t, [2]int{50, 2000}, [2]int{w, i})
	w, i = p.loops(65536)
	require.Equal(t, [2]int{20, 400}, [2]int{w, i})

	o, err = ParseArgs([]string{"allreduce", "-w", "3", "-n", "7"})
	require.NoError(t, err)
	p, err = newPlan(o, 4)
	require.NoError(t, err)
	w, i = p.loops(65536)
	require.Equal(t, [2]int{3, 7}, [2]int{w, i}, "without the option, -w and -n")

	for _, bad := range []string{"-1", "NaN", "1001", "x", "+Inf"} {
		_, err := ParseArgs([]string{"allreduce", "--peers-schedule", bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "peers-schedule")
	}
}
