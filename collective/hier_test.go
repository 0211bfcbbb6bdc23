package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// placedTopology puts rank r on host hostOf[r], of site siteOf(host).
func placedTopology(t testing.TB, hostOf []int, siteOf func(host int) string) *topology.Topology {
	ranks := make([]topology.RankInfo, len(hostOf))
	local := map[int]int{}
	for r, h := range hostOf {
		ranks[r] = topology.RankInfo{Rank: r, Host: fmt.Sprintf("h%d", h), Site: siteOf(h), LocalRank: local[h]}
		local[h]++
	}
	tp, err := topology.New(ranks)
	if err != nil {
		t.Fatal(err)
	}
	return &tp
}

// TestPlacedAlgorithms runs the algorithms that follow the topology on
// uneven placements, numbered site by site or not, and checks every rank's
// sums, for a count that leaves some shards empty and a larger one. The
// last rank comes late: the cyclic placement then hung when a pair's
// headers had gone to tree partners during an earlier phase and a ring
// waited for a send before its receiver could take it.
func TestPlacedAlgorithms(t *testing.T) {
	bySite := func(sites ...string) func(int) string { return func(h int) string { return sites[h%len(sites)] } }
	placements := []struct {
		name   string
		hostOf []int
		siteOf func(int) string
	}{
		{"cyclic 3+2+2+1 on two sites", []int{0, 1, 2, 0, 1, 2, 0, 3}, bySite("e", "w")},
		{"3 and 1 on one site", []int{0, 0, 1, 0}, bySite("s")},
		{"sites of 5 and 2, scrambled", []int{2, 0, 1, 0, 2, 3, 0}, func(h int) string { return []string{"e", "e", "w", "e"}[h] }},
		{"one rank per host, three sites", []int{0, 1, 2, 3, 4}, bySite("a", "b", "c")},
	}
	for _, p := range placements {
		for _, algo := range []collective.Algorithm{collective.AlgoHierarchical, collective.AlgoTree, collective.AlgoAuto} {
			t.Run(p.name+"/"+algo.String(), func(t *testing.T) {
				tp := placedTopology(t, p.hostOf, p.siteOf)
				n := len(p.hostOf)
				eps := inprocWorld(t, n)
				var wg sync.WaitGroup
				for r, ep := range eps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := placedRank(ep, r, n, algo, tp); err != nil {
							t.Errorf("rank %d: %v", r, err)
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}

func placedRank(ep transport.Endpoint, r, n int, algo collective.Algorithm, tp *topology.Topology) error {
	c, err := collective.New(ep, 1, collective.Config{AllReduce: algo, Topology: tp, ChunkBytes: collective.ChunkBytesMin})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if r == n-1 {
		// Late, so that the others wait long enough to send their headers
		// to their tree partners before the phases that need them.
		time.Sleep(20 * time.Millisecond)
	}
	for _, count := range []int{2, 5000} {
		x := make([]float64, count)
		for i := range x {
			x[i] = float64(r*count + i)
		}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		for i, v := range x {
			want := float64(n*i + count*n*(n-1)/2)
			if v != want {
				return fmt.Errorf("count %d: element %d is %v, want %v", count, i, v, want)
			}
		}
	}
	return nil
}

// TestPlacedLargeWorlds runs AllReduce (tree and hierarchical), Broadcast
// and Reduce (tree) beyond the table's 16 ranks, on a scattered placement
// over three sites, with an empty, a tiny and a many-chunk count. Each
// call has its own minute (callCtx), not the rank's whole run: under the
// race detector at load ~20 a world's nine calls took ~29 s.
func TestPlacedLargeWorlds(t *testing.T) {
	for _, n := range []int{33, 64} {
		hostOf := make([]int, n)
		for r := range hostOf {
			hostOf[r] = (r * 7) % (n/4 + 1)
		}
		tp := placedTopology(t, hostOf, func(h int) string { return []string{"a", "b", "c"}[h%3] })
		for _, algo := range []collective.Algorithm{collective.AlgoTree, collective.AlgoHierarchical} {
			eps := inprocWorld(t, n)
			var wg sync.WaitGroup
			for r, ep := range eps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := collective.New(ep, 1, collective.Config{AllReduce: algo, Broadcast: collective.AlgoTree, Reduce: collective.AlgoTree, Topology: tp, ChunkBytes: collective.ChunkBytesMin})
					if err != nil {
						t.Error(err)
						return
					}
					for _, count := range []int{0, 3, 100000} {
						x := make([]float64, count)
						for i := range x {
							x[i] = float64(r + i)
						}
						if err := callCtx(func(ctx context.Context) error { return collective.AllReduce(ctx, c, x, x, collective.Sum) }); err != nil {
							t.Error(err)
							return
						}
						for i, v := range x {
							if want := float64(n*i + n*(n-1)/2); v != want {
								t.Errorf("n=%d %v: x[%d]=%v want %v", n, algo, i, v, want)
								return
							}
						}
						root := (count + 5) % n
						y := make([]float64, count)
						if r == root {
							for i := range y {
								y[i] = float64(i * 3)
							}
						}
						if err := callCtx(func(ctx context.Context) error { return collective.Broadcast(ctx, c, y, y, root) }); err != nil {
							t.Error(err)
							return
						}
						for i, v := range y {
							if v != float64(i*3) {
								t.Errorf("bcast n=%d: y[%d]=%v", n, i, v)
								return
							}
						}
						z := make([]float64, count)
						if err := callCtx(func(ctx context.Context) error { return collective.Reduce(ctx, c, y, z, collective.Sum, root) }); err != nil {
							t.Error(err)
							return
						}
						for i, v := range z {
							if r == root && v != float64(n*i*3) {
								t.Errorf("reduce n=%d: z[%d]=%v", n, i, v)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
		}
	}
}

// callCtx runs call with a context of its own that ends a minute from
// now (three under the race detector: transporttest.RaceSlowdown): a
// bound on one collective call, which a loaded machine stretches less
// than a sequence of them. Under -race at load ~25 (session 33), the
// 64-rank tree AllReduce of TestPlacedLargeWorlds (800 kB in 4 KiB
// chunks, 64 goroutine ranks on 2 cores) outlived one minute, running.
func callCtx(call func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), transporttest.RaceSlowdown*time.Minute)
	defer cancel()
	return call(ctx)
}
