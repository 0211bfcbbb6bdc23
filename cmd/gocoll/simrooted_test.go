package main

import (
	"context"
	"testing"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/stretchr/testify/require"
)

// TestRootedAgainstModel: every forced Broadcast and Reduce ends with the
// confirm round, and the model prices it (before, the binomial tree at
// 8 B on 4 x 8 x 8 was predicted 2.99x too fast). On 3 sites x 2 hosts x 2
// ranks, the simulated time of chain, binomial and tree is within 15 % of
// the model's at 8 B, 64 KiB and 4 MiB, and the tree's at 16 MiB too
// (before its trees ran apart, treeRun, a rank waited for one tree's chunk
// while the other's waited to be forwarded: Broadcast 1.20 at 4 MiB and
// 1.45 at 16 MiB, Reduce 1.17 and 1.29; now 1.13 and 1.04, 1.04 and 1.01).
func TestRootedAgainstModel(t *testing.T) {
	topo, err := gridTopology(3, 2, 2)
	require.NoError(t, err)
	links := tune.DefaultLinks()
	const chunk = 512 << 10
	for _, coll := range []tune.Collective{tune.Broadcast, tune.Reduce} {
		for _, size := range []int{8, 64 << 10, 4 << 20, 16 << 20} {
			pred, err := tune.Predict(coll, tune.Input{Topology: topo, Bytes: size, ChunkBytes: chunk, Links: links, Channels: 1, IdealTransport: true})
			require.NoError(t, err)
			for _, p := range pred {
				if p.Algorithm != "tree" && size > 4<<20 {
					continue
				}
				algo, err := collective.ParseAlgorithm(p.Algorithm)
				require.NoError(t, err)
				res, err := simulate(context.Background(), simSpec{topo: topo, links: links, coll: coll, algo: algo, bytes: int64(size), chunk: chunk, channels: 1})
				require.NoError(t, err)
				require.Zero(t, res.wrong)
				ratio := res.time.Seconds() / p.Time.Seconds()
				t.Logf("%v %8d B %-9s simulated %-10v model %-10v %.3f", coll, size, p.Algorithm, res.time, p.Time, ratio)
				if ratio < 0.85 || ratio > 1.15 {
					t.Errorf("%v of %d B, %s: simulated %v, model %v: ratio %.3f outside [0.85, 1.15]", coll, size, p.Algorithm, res.time, p.Time, ratio)
				}
			}
		}
	}
}
