package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/stretchr/testify/require"
)

// gocoll sim --channels runs ring AllReduce on that many channels: on
// 2 sites x 2 hosts x 2 ranks whose uplinks have 4 paths, 2 channels put
// the two directions of the ring on separate paths, so a 4 MiB ring takes
// at most 0.7 of one channel's virtual time (0.60 when measured), exact
// in data mode and the same payload-free; by default (--channels 0) the
// model chooses 2 there and 1 over one path; out-of-range counts are a
// one-line usage error.
func TestSimChannels(t *testing.T) {
	topo, err := gridTopology(2, 2, 2)
	require.NoError(t, err)
	links := tune.DefaultLinks()
	links.WAN.Lanes = 4
	times := map[[2]int]float64{}
	for _, ch := range []int{1, 2} {
		for _, free := range []bool{false, true} {
			res, err := simulate(context.Background(), simSpec{topo: topo, links: links, coll: tune.AllReduce, algo: collective.AlgoRing,
				bytes: 4 << 20, chunk: 512 << 10, channels: ch, free: free})
			require.NoError(t, err, "%d channels, free %v", ch, free)
			require.Zero(t, res.wrong, "%d channels", ch)
			f := 0
			if free {
				f = 1
			}
			times[[2]int{ch, f}] = res.time.Seconds()
		}
		require.InDelta(t, 1, times[[2]int{ch, 1}]/times[[2]int{ch, 0}], 0.01, "%d channels: payload-free against data", ch)
	}
	ratio := times[[2]int{2, 0}] / times[[2]int{1, 0}]
	t.Logf("4 MiB ring, 2 channels against 1: %.3f (%.4g s / %.4g s)", ratio, times[[2]int{2, 0}], times[[2]int{1, 0}])
	require.Less(t, ratio, 0.7, "2 channels over 4 WAN paths")
	for _, args := range [][]string{{"--channels", "-1", "allreduce", "8"}, {"--channels", "17", "allreduce", "8"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"sim"}, args...), nil, &out, &errOut, nil)
		require.Equal(t, exitUsage, code, "%v: %s", args, errOut.String())
		require.Contains(t, errOut.String(), "--channels "+args[1]+": want 0 (the model's choice) to 16", args)
	}
	// By default the model chooses: 2 channels over 4 paths at 4 MiB, the
	// row named ring/2, its time the 2-channel run's; 1 over one path.
	for _, c := range []struct {
		paths, want string
		seconds     float64
	}{{"4", "ring/2", times[[2]int{2, 0}]}, {"1", "ring", 0}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"sim", "--wan-paths", c.paths, "--algo", "ring", "allreduce", "4M"}, nil, &out, &errOut, nil)
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		rows := simRows(t, out.String())
		got, ok := rows["4M "+c.want]
		require.True(t, ok, "--wan-paths %s: no %s row in\n%s", c.paths, c.want, out.String())
		if c.seconds > 0 {
			require.InDelta(t, c.seconds, got, c.seconds*0.001, out.String())
		}
	}
}
