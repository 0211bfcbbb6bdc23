package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/stretchr/testify/require"
)

// envTestArgs, set in the ranks TestProcesses starts (this test binary),
// holds their command line as JSON: they run the command instead of the
// tests.
const envTestArgs = "ALLREDUCE_TEST_ARGS"

func TestMain(m *testing.M) {
	if v := os.Getenv(envTestArgs); v != "" {
		var args []string
		if err := json.Unmarshal([]byte(v), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(run(args, program{}, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The hand-written backward pass agrees with central finite differences of
// the forward pass, for every parameter.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	m := mlp{sizes: []int{numFeatures, 6, 5, numClasses}}
	d := makeData(9, 7)
	ps := m.initParams(3)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range ps { // biases away from zero too, so every term matters
		for k := range p.Data {
			p.Data[k] += float32(0.3 * rng.NormFloat64())
		}
	}
	idx := []int{0, 3, 5, 8}
	x, y := d.gather(idx, nil, nil)
	ws := m.newWorkspace()
	grads := make([][]float32, len(ps))
	for i, p := range ps {
		grads[i] = make([]float32, len(p.Data))
	}
	var readied []int
	m.forward(ps, x, y, ws)
	require.NoError(t, m.backward(ps, y, func(i int) []float32 { return grads[i] },
		func(i int) error { readied = append(readied, i); return nil }, ws))
	require.Equal(t, []int{4, 5, 2, 3, 0, 1}, readied, "the last layer first")
	loss := func() float64 {
		l, _ := m.forward(ps, x, y, ws)
		return l
	}
	const h = 1e-2
	nontrivial := 0
	for i, p := range ps {
		for k := range p.Data {
			orig := p.Data[k]
			p.Data[k] = orig + h
			up := loss()
			p.Data[k] = orig - h
			down := loss()
			p.Data[k] = orig
			numeric := (up - down) / (2 * h)
			require.InDelta(t, numeric, float64(grads[i][k]), 2e-3*max(1, math.Abs(numeric)), "parameter %d[%d]", i, k)
			if math.Abs(numeric) > 1e-2 {
				nontrivial++
			}
		}
	}
	require.Greater(t, nontrivial, m.numParams()/4, "a non-trivial gradient")
}

// onRanks runs trainRank on n goroutine ranks over the in-process
// transport and returns their results.
func onRanks(t *testing.T, cfg config) []rankResult {
	t.Helper()
	world, err := inproc.NewWorld(cfg.ranks)
	require.NoError(t, err)
	defer func() { _ = world.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := make([]rankResult, cfg.ranks)
	errs := make([]error, cfg.ranks)
	var wg sync.WaitGroup
	for rank, ep := range world.Endpoints() {
		wg.Go(func() {
			comm, err := collective.New(ep, 1, collective.Config{})
			if err != nil {
				errs[rank] = err
				return
			}
			defer func() { _ = comm.Close() }()
			results[rank], errs[rank] = trainRank(ctx, cfg, comm, nil)
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return results
}

// Data-parallel training over 1 to 4 ranks gives bitwise-identical weights
// on every rank, within the tolerance of single-process training, also with
// shards of different sizes (ranks with a batch more: Join) and batches
// that do not divide them, in float32 and with bfloat16 gradients.
func TestDataParallelMatchesSingleProcess(t *testing.T) {
	for _, bf16 := range []bool{false, true} {
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("bf16=%v/ranks=%d", bf16, ranks), func(t *testing.T) {
				cfg := config{ranks: ranks, epochs: 3, width: 16, depth: 2, samples: 203, batch: 5,
					lr: 0.1, seed: 11, bucketKiB: 1, bf16: bf16}
				require.NoError(t, cfg.validate())
				results := onRanks(t, cfg)
				want := flatten(results[0].params)
				for r, res := range results {
					require.Equal(t, -1, firstDifferingBlock(append(append([]float32(nil), want...), flatten(res.params)...), len(want)), "rank %d differs", r)
					require.Equal(t, results[0].epochs, res.epochs, "rank %d", r)
				}
				ref := trainReference(cfg, ranks)
				require.LessOrEqual(t, relativeDiff(want, flatten(ref.params)), tolerance(cfg))
				require.Equal(t, ref.steps, results[0].steps, "every rank takes every step, Join's included")
				init := flatten(newMLP(cfg).initParams(cfg.seed))
				require.Greater(t, relativeDiff(want, init), 1e-2, "training moved the weights")
				require.Less(t, results[0].epochs[cfg.epochs].loss, results[0].epochs[0].loss, "training lowered the loss")
				require.Greater(t, results[0].buckets, 1, "several buckets")
			})
		}
	}
}

// The tolerance is tight enough to tell a different training run apart:
// one more sample per batch moves the weights further than that.
func TestToleranceSeesADifferentSchedule(t *testing.T) {
	cfg := config{ranks: 2, epochs: 2, width: 16, depth: 2, samples: 200, batch: 5, lr: 0.1, seed: 11, bucketKiB: 1}
	other := cfg
	other.batch++
	a, b := trainReference(cfg, 2), trainReference(other, 2)
	require.Greater(t, relativeDiff(flatten(a.params), flatten(b.params)), toleranceBF16)
}

func TestFirstDifferingBlock(t *testing.T) {
	require.Equal(t, -1, firstDifferingBlock([]float32{1, 2, 1, 2, 1, 2}, 2))
	off := []float32{1, 2, 1, 2, 1, math.Nextafter32(2, 3)}
	require.Equal(t, 2, firstDifferingBlock(off, 2))
	zero := []float32{0, float32(math.Copysign(0, -1))}
	require.Equal(t, 1, firstDifferingBlock(zero, 1), "-0 is not bitwise +0")
}

func TestRelativeDiff(t *testing.T) {
	require.Equal(t, 0.25, relativeDiff([]float32{1, 2, 4}, []float32{1, 3, 4}))
	require.True(t, math.IsNaN(relativeDiff([]float32{float32(math.NaN())}, []float32{0})))
	require.True(t, math.IsInf(relativeDiff([]float32{1}, nil), 1))
}

// Bad settings end with status 2 and one line on stderr, before any work.
func TestBadFlags(t *testing.T) {
	cases := map[string][]string{
		"zero ranks":        {"-ranks", "0"},
		"too many ranks":    {"-ranks", "65"},
		"unknown transport": {"-transport", "carrier-pigeon"},
		"zero epochs":       {"-epochs", "0"},
		"zero width":        {"-width", "0"},
		"too deep":          {"-depth", "33"},
		"fewer than ranks":  {"-ranks", "4", "-samples", "3"},
		"zero batch":        {"-batch", "0"},
		"zero bucket":       {"-bucket-kib", "0"},
		"zero lr":           {"-lr", "0"},
		"NaN lr":            {"-lr", "NaN"},
		"not a number":      {"-ranks", "four"},
		"unknown flag":      {"-gpus", "8"},
		"stray argument":    {"extra"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 2, run(args, program{}, &out, &errOut))
			require.Empty(t, out.String())
			msg := errOut.String()
			require.True(t, strings.HasPrefix(msg, "allreduce: "), msg)
			require.Equal(t, 1, strings.Count(msg, "\n"), msg)
		})
	}
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-h"}, program{}, &out, &errOut))
	require.Contains(t, out.String(), "-bucket-kib")
	require.Contains(t, out.String(), "auto|shm|tcp|metaroce|shm+tcp")
	require.Empty(t, errOut.String())
}

// parseConfig accepts only settings inside their documented limits, and
// never panics.
func FuzzParseConfig(f *testing.F) {
	f.Add("")
	f.Add("-ranks 2 -transport tcp")
	f.Add("-epochs 3 -width 8 -depth 3 -samples 100 -batch 7 -lr 0.1 -seed 42 -bucket-kib 64 -bf16")
	f.Add("-ranks=64 -samples=64")
	f.Fuzz(func(t *testing.T, line string) {
		c, _, err := parseConfig(strings.Fields(line))
		if err != nil {
			return
		}
		require.NoError(t, c.validate())
		require.True(t, c.ranks >= 1 && c.ranks <= ranksMax)
		require.True(t, c.samples >= c.ranks && c.samples <= samplesMax)
		require.True(t, c.epochs >= 1 && c.width >= 1 && c.depth >= 1 && c.batch >= 1 && c.bucketKiB >= 1)
		require.True(t, c.lr > 0 && c.lr <= lrMax)
		_ = ddpConfig(c)
	})
}

// One rank in this process (-ranks 1); timings are left out of the printed
// lines since they vary.
func Example_run() {
	var out, errOut bytes.Buffer
	status := run([]string{"-ranks", "1", "-samples", "200", "-epochs", "2", "-width", "32", "-depth", "2"}, program{}, &out, &errOut)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "epoch") || strings.HasPrefix(line, "check (a)") || strings.HasPrefix(line, "model") {
			fmt.Println(line)
		}
		if strings.HasPrefix(line, "check (b)") {
			fmt.Println("check (b):", line[strings.LastIndex(line, " ")+1:])
		}
	}
	fmt.Println("exit status", status)
	// Output:
	// model: MLP 32-32-32-10, 3 layers, 2442 float32 parameters; gradients sent as float32 in buckets of 1024 KiB (the first 1024 KiB)
	// epoch   0  loss 2.3583  accuracy  14.0%
	// epoch   1  loss 2.1429  accuracy  25.5%
	// epoch   2  loss 1.9610  accuracy  35.5%
	// check (a): weights bitwise identical on all 1 ranks: ok
	// check (b): ok
	// exit status 0
}
