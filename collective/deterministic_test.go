package collective_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// TestDeterministicAcrossAlgorithms: with Config.Deterministic, AllReduce
// of random floats of mixed magnitudes gives every rank the same bits under
// every algorithm, chunk size and channel count, at world sizes 2 to 16 on an uneven
// cyclic placement over two sites, equal to the rank-order fold
// ((x0+x1)+x2)+..., in and out of place. Without it the same inputs give
// different bits across algorithms at some size (so the check can fail).
func TestDeterministicAcrossAlgorithms(t *testing.T) {
	const count = 5003 // several chunks of 4 KiB per segment at small sizes
	sizes := []int{2, 3, 4, 5, 7, 8, 11, 16}
	if testing.Short() {
		sizes = []int{2, 3, 5, 8, 16}
	}
	configs := []collective.Config{}
	for _, a := range collective.Algorithms(collective.KindAllReduce) {
		for _, chunk := range []int{collective.ChunkBytesMin, 64 << 10} {
			for _, ch := range []int{1, 3} {
				configs = append(configs, collective.Config{AllReduce: a, ChunkBytes: chunk, Channels: ch})
			}
		}
	}
	differed := false
	for _, n := range sizes {
		hostOf := make([]int, n)
		for r := range hostOf {
			hostOf[r] = r % max(1, (n+2)/3) // cyclic over hosts of uneven size
		}
		tp := placedTopology(t, hostOf, func(h int) string { return []string{"e", "w"}[h%2] })
		inputs := make([][]float32, n)
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		for r := range inputs {
			inputs[r] = make([]float32, count)
			for i := range inputs[r] {
				inputs[r][i] = float32((rng.Float64() - 0.5) * math.Pow(2, float64(rng.IntN(40)-20)))
			}
		}
		want := make([]float32, count)
		for i := range want {
			acc := inputs[0][i]
			for r := 1; r < n; r++ {
				acc += inputs[r][i]
			}
			want[i] = acc
		}
		var plain [][]float32
		for _, det := range []bool{true, false} {
			for _, cfg := range configs {
				cfg.Deterministic, cfg.Topology = det, tp
				got := runAllReduceFloats(t, n, cfg, inputs)
				name := fmt.Sprintf("n=%d/%v/chunk %d/%d channels/deterministic %v", n, cfg.AllReduce, cfg.ChunkBytes, cfg.Channels, det)
				if !det {
					for r, g := range got { // each algorithm's own order, the same bits on every rank
						if i := firstBitDiff(g, got[0]); i >= 0 {
							t.Fatalf("%s: rank %d element %d is %#x, rank 0's %#x", name, r, i, math.Float32bits(g[i]), math.Float32bits(got[0][i]))
						}
					}
					plain = append(plain, got[0])
					continue
				}
				for r, g := range got {
					if i := firstBitDiff(g, want); i >= 0 {
						t.Fatalf("%s: rank %d element %d is %v (%#x), want %v (%#x)", name, r, i,
							g[i], math.Float32bits(g[i]), want[i], math.Float32bits(want[i]))
					}
				}
			}
		}
		for _, p := range plain[1:] {
			differed = differed || firstBitDiff(p, plain[0]) >= 0
		}
	}
	if !differed {
		t.Errorf("without Deterministic every algorithm gave the same bits at every size: the inputs do not test the order")
	}
}

// runAllReduceFloats runs, on n in-process ranks with cfg, an out-of-place
// AllReduce of inputs and an in-place one, checks they agree bitwise, and
// returns each rank's result.
func runAllReduceFloats(t *testing.T, n int, cfg collective.Config, inputs [][]float32) [][]float32 {
	t.Helper()
	eps := inprocWorld(t, n)
	out := make([][]float32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				c, err := collective.New(ep, 1, cfg)
				if err != nil {
					return err
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				out[r] = make([]float32, len(inputs[r]))
				if err := collective.AllReduce(ctx, c, inputs[r], out[r], collective.Sum); err != nil {
					return err
				}
				in := slices.Clone(inputs[r])
				if err := collective.AllReduce(ctx, c, in, in, collective.Sum); err != nil {
					return err
				}
				if i := firstBitDiff(in, out[r]); i >= 0 {
					return fmt.Errorf("in place differs from out of place at element %d", i)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("n=%d %v: rank %d: %v", n, cfg.AllReduce, r, err)
		}
	}
	return out
}

// firstBitDiff returns the first index where a and b differ in bits, or -1.
func firstBitDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
