package collective_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// TestHierarchicalRandomPlacements runs the hierarchical AllReduce (out
// of place and in place, Sum on int32 exactly, Avg on float32 the same
// bits both ways), ReduceScatter, AllGather and Broadcast on random
// placements: 1 to 9 ranks on random hosts of 1 to 3 sites, or no
// topology, chunks of 1 to 3 times ChunkBytesMin and counts from 0 to
// 200 chunks, so that the packed rings' chunks lie in one block or span
// several (hierblocks.go) and the AllReduce's pieces read send or recv
// (hierdeps.go). Each rank's values differ by rank and index, so a block
// from the wrong rank or offset shows. GOCOLL_HIER_SEED picks another
// seed, GOCOLL_HIER_ITERS more placements.
func TestHierarchicalRandomPlacements(t *testing.T) {
	iters := 30
	if testing.Short() {
		iters = 10
	}
	if s := os.Getenv("GOCOLL_HIER_ITERS"); s != "" {
		iters, _ = strconv.Atoi(s)
	}
	seed := uint64(1)
	if s := os.Getenv("GOCOLL_HIER_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	for it := range iters {
		n := 1 + rng.IntN(9)
		hosts := 1 + rng.IntN(n)
		sites := 1 + rng.IntN(3)
		hostOf := make([]int, n)
		for r := range hostOf {
			hostOf[r] = rng.IntN(hosts)
		}
		siteOf := func(h int) string { return fmt.Sprint("s", h%sites) }
		tp := placedTopology(t, hostOf, siteOf)
		if rng.IntN(4) == 0 {
			tp = nil
		}
		chunk := collective.ChunkBytesMin * (1 + rng.IntN(3))
		counts := []int{0, 1, 7, rng.IntN(3 * chunk / 4), rng.IntN(20 * chunk / 4), rng.IntN(200 * chunk / 4)}
		count := counts[rng.IntN(len(counts))]
		name := fmt.Sprintf("seed %d placement %d: hosts %v, %d sites, topology %v, chunk %d, count %d", seed, it, hostOf, sites, tp != nil, chunk, count)
		cfg := collective.Config{AllReduce: collective.AlgoHierarchical, ReduceScatter: collective.AlgoHierarchical,
			AllGather: collective.AlgoHierarchical, Broadcast: collective.AlgoHierarchical, Topology: tp, ChunkBytes: chunk}
		var comms []*collective.Comm
		for _, ep := range inprocWorld(t, n) {
			c, err := collective.New(ep, 1, cfg)
			if err != nil {
				t.Fatal(err)
			}
			comms = append(comms, c)
		}
		var wg sync.WaitGroup
		for r, c := range comms {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				fail := func(f string, a ...any) { t.Errorf("%s rank %d: "+f, append([]any{name, r}, a...)...) }
				val := func(rank, i int) int32 { return int32(rank*7919 + i*31 + 1) }
				// AllReduce out of place and in place.
				send, recv := make([]int32, count), make([]int32, count)
				for i := range send {
					send[i], recv[i] = val(r, i), -12345
				}
				if err := collective.AllReduce(ctx, c, send, recv, collective.Sum); err != nil {
					fail("%v", err)
					return
				}
				for i := range recv {
					want := int32(0)
					for q := range n {
						want += val(q, i)
					}
					if recv[i] != want || send[i] != val(r, i) {
						fail("AllReduce oop element %d: %d want %d (send %d)", i, recv[i], want, send[i])
						return
					}
				}
				if err := collective.AllReduce(ctx, c, send, send, collective.Sum); err != nil {
					fail("%v", err)
					return
				}
				for i := range recv {
					if recv[i] != send[i] {
						fail("AllReduce in place element %d: %d want %d", i, send[i], recv[i])
						return
					}
				}
				// Float Avg: out of place gives the in-place bits.
				fs := make([]float32, count)
				for i := range fs {
					fs[i] = float32(val(r, i)) * 1.37e-3
				}
				fo := make([]float32, count)
				if err := collective.AllReduce(ctx, c, fs, fo, collective.Avg); err != nil {
					fail("%v", err)
					return
				}
				if err := collective.AllReduce(ctx, c, fs, fs, collective.Avg); err != nil {
					fail("%v", err)
					return
				}
				for i := range fs {
					if math.Float32bits(fs[i]) != math.Float32bits(fo[i]) {
						fail("Avg element %d: oop %v in place %v", i, fo[i], fs[i])
						return
					}
				}
				// ReduceScatter out of place.
				rs := make([]int32, n*count)
				for i := range rs {
					rs[i] = val(r, i)
				}
				out := make([]int32, count)
				if err := collective.ReduceScatter(ctx, c, rs, out, collective.Sum); err != nil {
					fail("%v", err)
					return
				}
				for i := range out {
					want := int32(0)
					for q := range n {
						want += val(q, r*count+i)
					}
					if out[i] != want || rs[r*count+i] != val(r, r*count+i) {
						fail("ReduceScatter element %d: %d want %d", i, out[i], want)
						return
					}
				}
				// AllGather.
				mine := make([]int32, count)
				for i := range mine {
					mine[i] = val(r, i)
				}
				all := make([]int32, n*count)
				for i := range all {
					all[i] = -1
				}
				if err := collective.AllGather(ctx, c, mine, all); err != nil {
					fail("%v", err)
					return
				}
				for i := range all {
					if want := val(i/max(count, 1), i%max(count, 1)); all[i] != want {
						fail("AllGather element %d: %d want %d", i, all[i], want)
						return
					}
				}
				// Broadcast from a random root.
				root := (count + n/2) % n
				bc := make([]int32, count)
				for i := range bc {
					bc[i] = -1
					if r == root {
						bc[i] = val(root, i)
					}
				}
				if err := collective.Broadcast(ctx, c, bc, bc, root); err != nil {
					fail("%v", err)
					return
				}
				for i := range bc {
					if bc[i] != val(root, i) {
						fail("Broadcast element %d: %d want %d", i, bc[i], val(root, i))
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}
