package collective_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/simnet"
)

// TestHierarchicalPieces runs the pipelined hierarchical AllReduce with
// 4 KiB chunks on counts that cut the buffer in 1 to 8 pieces (a piece is
// at least 2 chunks at 8 ranks or fewer), on the lab's even grid (2 sites x 2 hosts x 2
// ranks), a cyclic uneven placement and sites of different sizes, in and
// out of place, and checks every element of every rank (Sum, exact in
// float64; Max). The ranks start at different times, so that pieces meet
// each other at different phases.
func TestHierarchicalPieces(t *testing.T) {
	bySite := func(sites ...string) func(int) string { return func(h int) string { return sites[h%len(sites)] } }
	placements := []struct {
		name   string
		hostOf []int
		siteOf func(int) string
	}{
		{"lab 2x2x2", []int{0, 0, 1, 1, 2, 2, 3, 3}, func(h int) string { return []string{"a", "a", "b", "b"}[h] }},
		{"cyclic 3+2+2+1 on two sites", []int{0, 1, 2, 0, 1, 2, 0, 3}, bySite("e", "w")},
		{"sites of 5 and 2, scrambled", []int{2, 0, 1, 0, 2, 3, 0}, func(h int) string { return []string{"e", "e", "w", "e"}[h] }},
	}
	const chunk = collective.ChunkBytesMin
	counts := []int{chunk * 3 / 8, chunk*2*3/8 + 5, chunk * 2 * 8 / 8, chunk*2*20/8 + 3} // 1, 3, 8, 8 pieces of float64
	for _, p := range placements {
		t.Run(p.name, func(t *testing.T) {
			tp := placedTopology(t, p.hostOf, p.siteOf)
			n := len(p.hostOf)
			eps := inprocWorld(t, n)
			var wg sync.WaitGroup
			for r, ep := range eps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := collective.New(ep, 1, collective.Config{AllReduce: collective.AlgoHierarchical, Topology: tp, ChunkBytes: chunk})
					if err != nil {
						t.Error(err)
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					time.Sleep(time.Duration(r%3) * 5 * time.Millisecond)
					for _, count := range counts {
						for _, inPlace := range []bool{true, false} {
							if err := checkHierSum(ctx, c, r, n, count, inPlace); err != nil {
								t.Errorf("rank %d: %v", r, err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

func checkHierSum(ctx context.Context, c *collective.Comm, r, n, count int, inPlace bool) error {
	x := make([]float64, count)
	for i := range x {
		x[i] = float64((r+1)*(i%1000) + r)
	}
	y := x
	if !inPlace {
		y = make([]float64, count)
	}
	if err := collective.AllReduce(ctx, c, x, y, collective.Sum); err != nil {
		return err
	}
	for i, v := range y {
		if want := float64(n*(n+1)/2*(i%1000) + n*(n-1)/2); v != want {
			return fmt.Errorf("count %d in place %v: element %d is %v, want %v", count, inPlace, i, v, want)
		}
	}
	for i := range x {
		x[i] = float64((i*7 + r*13) % 101)
	}
	if err := collective.AllReduce(ctx, c, x, x, collective.Max); err != nil {
		return err
	}
	for i, v := range x {
		want := 0.0
		for q := range n {
			want = max(want, float64((i*7+q*13)%101))
		}
		if v != want {
			return fmt.Errorf("max, count %d: element %d is %v, want %v", count, i, v, want)
		}
	}
	return nil
}

// TestHierarchicalTwoSitesOneCrossing: on the lab's grid (2 sites x 2
// hosts x 2 ranks) over simnet, in virtual time, an 8-byte hierarchical
// AllReduce crosses the WAN once: its two shard owners' AllReduce is one
// exchange, not a ring's reduce-scatter and all-gather steps (two WAN
// latencies, 4.1 ms here before). Every rank gets the exact sum.
func TestHierarchicalTwoSitesOneCrossing(t *testing.T) {
	const wan, n = 2 * time.Millisecond, 8
	took := onLabGrid(t, wan, 25e6, 0, func(ctx context.Context, c *collective.Comm, r, call int) error {
		x := []float64{float64(r + 1)}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		if want := float64(n * (n + 1) / 2); x[0] != want {
			return fmt.Errorf("sum %v, want %v", x[0], want)
		}
		return nil
	})
	if worst := slices.Max(took); !t.Failed() && (worst < wan || worst > wan*3/2) {
		t.Errorf("8 B hierarchical AllReduce took %v of virtual time (slowest rank; %v each), want one WAN latency (%v) and little more", worst, took, wan)
	}
}

// TestHierarchicalPiecesKeepTheWANBusy: on the lab's grid over simnet, in
// virtual time, a hierarchical AllReduce of 4 MiB in 8 pieces takes the
// WAN's time for the bytes each site receives (4 MiB at 25 MB/s) and a
// latency or so, with every rank's sum exact. Before a piece's receive
// that is late (a WAN message) stopped holding back a later piece's that
// had arrived (hierPipe.next), it took 8 ms more (178.3 ms against 170.0):
// the shard owner of the first sub-shard waited for its WAN message
// before its LAN messages of later pieces, which the other owner in its
// site needed before it could send on.
func TestHierarchicalPiecesKeepTheWANBusy(t *testing.T) {
	const wan, bw, size, n = 2 * time.Millisecond, 25e6, 4 << 20, 8
	took := onLabGrid(t, wan, bw, 64<<10, exactSumAllReduce(size, n))
	bound := time.Duration(size / bw * float64(time.Second))
	if worst := slices.Max(took); !t.Failed() && worst > bound+2*wan {
		t.Errorf("4 MiB hierarchical AllReduce in 8 pieces took %v of virtual time (slowest rank), want at most the WAN's %v and two latencies (%v)", worst, bound, bound+2*wan)
	}
}

// TestHierarchicalPiecesOverlapTheLevels: on the lab's grid over simnet,
// in virtual time, with the lab's figures (a site's WAN 100 MB/s, 2 ms;
// MetaRoCE's 2 MiB chunks) and a host and site level only 3x the WAN (as
// the lab's shared memory and MetaRoCE LAN run on its busy cores), a
// 16 MiB hierarchical AllReduce takes at most 1/0.95 of the WAN's time
// for the bytes each site receives, with every rank's sum exact. With
// pieces of at least 8 chunks it ran as one piece, whose WAN idled while
// its reduce-scatters and all-gathers ran: 239.7 ms (70 % of the bound)
// against 187.3 (90 %) in 4 even pieces, whose first piece's
// reduce-scatters and last piece's all-gathers still left the WAN idle
// at the ends; 171.5 ms (97.8 %) with the first and last cut in a ramp
// (hierPieceBounds).
func TestHierarchicalPiecesOverlapTheLevels(t *testing.T) {
	const wan, bw, lan, size, n = 2 * time.Millisecond, 100e6, 300e6, 16 << 20, 8
	links := tune.Links{
		Host: tune.Link{Latency: 5 * time.Microsecond, Bandwidth: lan},
		Site: tune.Link{Latency: 20 * time.Microsecond, Bandwidth: lan},
		WAN:  tune.Link{Latency: wan, Bandwidth: bw},
	}
	took := onGrid(t, links, 2<<20, exactSumAllReduce(size, n))
	bound := time.Duration(size / bw * float64(time.Second))
	if worst := slices.Max(took); !t.Failed() && worst > time.Duration(float64(bound)/0.95) {
		t.Errorf("16 MiB hierarchical AllReduce took %v of virtual time (slowest rank), %.1f %% of the WAN's %v; want at least 95 %%", worst, 100*float64(bound)/float64(worst), bound)
	}
}

// exactSumAllReduce returns a call that runs an in-place AllReduce (Sum)
// of bytes/4 float32 on a world of n ranks, rank r's element i being
// r + i%7, and checks every element of the result.
func exactSumAllReduce(bytes, n int) func(ctx context.Context, c *collective.Comm, r, call int) error {
	return func(ctx context.Context, c *collective.Comm, r, call int) error {
		x := make([]float32, bytes/4)
		for i := range x {
			x[i] = float32(r + i%7)
		}
		if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
			return err
		}
		for i, v := range x {
			if want := float32(n*(n-1)/2 + n*(i%7)); v != want {
				return fmt.Errorf("element %d is %v, want %v", i, v, want)
			}
		}
		return nil
	}
}

// onLabGrid runs call twice (the first lines the ranks up) on every rank
// of the lab's grid (2 sites x 2 hosts x 2 ranks) over simnet, its WAN of
// latency wan and bw bytes/s, with the hierarchical AllReduce forced
// (chunk: Config.ChunkBytes, 0 for the default); it returns each rank's
// virtual time of the second call. A call's error fails the test.
func onLabGrid(t *testing.T, wan time.Duration, bw float64, chunk int, call func(ctx context.Context, c *collective.Comm, r, call int) error) []time.Duration {
	t.Helper()
	return onGrid(t, tune.Links{
		Host: tune.Link{Latency: 5 * time.Microsecond, Bandwidth: 5e9},
		Site: tune.Link{Latency: 20 * time.Microsecond, Bandwidth: 1.25e9},
		WAN:  tune.Link{Latency: wan, Bandwidth: bw},
	}, chunk, call)
}

// onGrid is onLabGrid with the links given.
func onGrid(t *testing.T, links tune.Links, chunk int, call func(ctx context.Context, c *collective.Comm, r, call int) error) []time.Duration {
	t.Helper()
	tp := placedTopology(t, []int{0, 0, 1, 1, 2, 2, 3, 3}, func(h int) string { return []string{"a", "a", "b", "b"}[h] })
	// The ranks know the fabric's figures, as a job's probe gives them
	// (the pieces' ramp reads them: tune.HierRamp).
	host, site, wan := links.Host, links.Site, links.WAN
	tp.Links = &topology.Links{Host: &host, Site: &site, WAN: &wan}
	w, err := simnet.NewWorld(*tp, links)
	if err != nil {
		t.Fatal(err)
	}
	eps := w.Endpoints()
	took := make([]time.Duration, len(eps))
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			defer ep.Close()
			c, err := collective.New(ep, 1, collective.Config{AllReduce: collective.AlgoHierarchical, Topology: tp, ChunkBytes: chunk})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i := range 2 {
				start := w.Now()
				if err := call(ctx, c, r, i); err != nil {
					t.Errorf("rank %d call %d: %v", r, i, err)
					return
				}
				took[r] = w.Now() - start
			}
		})
	}
	wg.Wait()
	return took
}

// TestHierarchicalChunksOverlapTheLevels: on the lab's grid over simnet,
// in virtual time, an AllReduce of 128 chunks (8 pieces of 16 chunks: a
// 256 MiB call's shape in MetaRoCE's 2 MiB chunks, scaled down 128 times,
// its links too: a site's WAN 100/128 MB/s, 2 ms, its host and site links
// twice that) takes at most 1/0.95 of the WAN's time for the bytes each
// site receives, with every rank's sum exact. When a level's send waited
// for the whole lower ring of its piece, not only for the lower level's
// receives of its chunk (hierdeps.go), it took 2.896 s (92.7 % of the
// bound) against 2.791 s (96.2 %).
func TestHierarchicalChunksOverlapTheLevels(t *testing.T) {
	const wan, bw, size, chunk, n = 2 * time.Millisecond, 100e6 / 128, 2 << 20, 16 << 10, 8
	links := tune.Links{
		Host: tune.Link{Latency: 5 * time.Microsecond, Bandwidth: 2 * bw},
		Site: tune.Link{Latency: 20 * time.Microsecond, Bandwidth: 2 * bw},
		WAN:  tune.Link{Latency: wan, Bandwidth: bw},
	}
	if p := tune.HierPieces(size, chunk, n); p != 8 {
		t.Fatalf("tune.HierPieces(%d, %d, %d) = %d, want 8 pieces (of 16 chunks)", size, chunk, n, p)
	}
	took := onGrid(t, links, chunk, exactSumAllReduce(size, n))
	bound := time.Duration(size / bw * float64(time.Second))
	if worst := slices.Max(took); !t.Failed() && worst > time.Duration(float64(bound)/0.95) {
		t.Errorf("%d B hierarchical AllReduce in %d B chunks took %v of virtual time (slowest rank), %.1f %% of the WAN's %v; want at least 95 %%", size, chunk, worst, 100*float64(bound)/float64(worst), bound)
	}
}
