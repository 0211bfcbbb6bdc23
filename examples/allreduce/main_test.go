package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The hand-written backward pass agrees with central finite differences of
// the forward pass, for every parameter.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	m := mlp{in: numFeatures, hidden: 5, out: numClasses}
	d := makeSpiral(40, 7)
	p := m.initParams(3)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range p { // biases away from zero too, so every term matters
		p[i] += 0.3 * rng.NormFloat64()
	}
	idx := []int{0, 3, 5, 11, 17, 23, 39}
	ws := m.newWorkspace()
	grad := make([]float64, m.numParams())
	loss := m.gradient(p, d, idx, grad, ws)

	meanLoss := func(q []float64) float64 {
		sum := 0.0
		for _, i := range idx {
			l, _ := m.forward(q, d.input(i), d.labels[i], ws)
			sum += l
		}
		return sum / float64(len(idx))
	}
	require.InDelta(t, meanLoss(p), loss, 1e-12, "gradient's loss is the batch's mean loss")
	const h = 1e-6
	q := append([]float64(nil), p...)
	for i := range p {
		q[i] = p[i] + h
		up := meanLoss(q)
		q[i] = p[i] - h
		down := meanLoss(q)
		q[i] = p[i]
		numeric := (up - down) / (2 * h)
		require.InDelta(t, numeric, grad[i], 1e-7*max(1, math.Abs(numeric)), "parameter %d", i)
	}
	require.Greater(t, maxAbsDiff(grad, make([]float64, len(grad))), 1e-3, "a non-trivial gradient")
}

// Training data-parallel over 1 to 4 ranks gives bitwise-identical weights
// on every rank, within 1e-5 of single-process training, even where the
// samples do not divide among the ranks and the batch does not divide the
// shard.
func TestDataParallelMatchesSingleProcess(t *testing.T) {
	for _, transport := range []string{"inproc", "tcp", "metaroce"} {
		for ranks := 1; ranks <= 4; ranks++ {
			t.Run(fmt.Sprintf("%s/ranks=%d", transport, ranks), func(t *testing.T) {
				cfg := config{ranks: ranks, transport: transport, epochs: 3, hidden: 8,
					samples: 203, batch: 5, lr: 0.3, seed: 11}
				require.NoError(t, cfg.validate())
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var seen []epochStats
				rep, err := runJob(ctx, cfg, func(s epochStats) { seen = append(seen, s) })
				require.NoError(t, err)
				require.True(t, rep.identicalOK(), "rank %d differs", rep.differingRank)
				require.LessOrEqual(t, rep.maxDiff, referenceTolerance)
				require.Len(t, seen, cfg.epochs+1)
				require.Equal(t, seen, rep.rank0.epochs)
				init := newJob(cfg).model.initParams(cfg.seed)
				require.Greater(t, maxAbsDiff(rep.rank0.params, init), 1e-2, "training moved the weights")
				require.Less(t, seen[cfg.epochs].loss, seen[0].loss, "training lowered the loss")
			})
		}
	}
}

// The 1e-5 bound is tight enough to tell a different training run apart:
// one more sample per batch moves the weights further than that.
func TestReferenceToleranceSeesADifferentSchedule(t *testing.T) {
	cfg := config{ranks: 2, transport: "inproc", epochs: 2, hidden: 8, samples: 200, batch: 5, lr: 0.3, seed: 11}
	other := cfg
	other.batch++
	require.Greater(t, maxAbsDiff(trainReference(newJob(cfg)), trainReference(newJob(other))), referenceTolerance)
}

func TestFirstDifferingBlock(t *testing.T) {
	same := []float64{1, 2, 1, 2, 1, 2}
	require.Equal(t, -1, firstDifferingBlock(same, 2))
	off := []float64{1, 2, 1, 2, 1, math.Nextafter(2, 3)}
	require.Equal(t, 2, firstDifferingBlock(off, 2))
	zero := []float64{0, math.Copysign(0, -1)}
	require.Equal(t, 1, firstDifferingBlock(zero, 1), "-0 is not bitwise +0")
	require.Equal(t, -1, firstDifferingBlock([]float64{5}, 1), "one rank")
}

func TestMaxAbsDiff(t *testing.T) {
	require.Equal(t, 0.5, maxAbsDiff([]float64{1, 2, 3}, []float64{1, 2.5, 3}))
	require.True(t, math.IsNaN(maxAbsDiff([]float64{math.NaN()}, []float64{0})))
	require.True(t, math.IsInf(maxAbsDiff([]float64{1}, nil), 1))
	require.False(t, report{maxDiff: math.NaN()}.referenceOK(), "NaN weights fail the check")
}

// Bad settings end with status 2 and one line on stderr, before any work.
func TestBadFlags(t *testing.T) {
	cases := map[string][]string{
		"zero ranks":        {"-ranks", "0"},
		"too many ranks":    {"-ranks", "65"},
		"unknown transport": {"-transport", "carrier-pigeon"},
		"zero epochs":       {"-epochs", "0"},
		"negative epochs":   {"-epochs", "-3"},
		"zero hidden":       {"-hidden", "0"},
		"fewer than ranks":  {"-ranks", "4", "-samples", "3"},
		"zero batch":        {"-batch", "0"},
		"zero lr":           {"-lr", "0"},
		"NaN lr":            {"-lr", "NaN"},
		"infinite lr":       {"-lr", "+Inf"},
		"not a number":      {"-ranks", "four"},
		"unknown flag":      {"-gpus", "8"},
		"stray argument":    {"extra"},
		"negative seed":     {"-seed", "-1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.Equal(t, 2, run(args, &out, &errOut))
			require.Empty(t, out.String())
			msg := errOut.String()
			require.True(t, strings.HasPrefix(msg, "allreduce: "), msg)
			require.Equal(t, 1, strings.Count(msg, "\n"), msg)
			require.True(t, strings.HasSuffix(msg, "\n"), msg)
		})
	}
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	require.Contains(t, out.String(), "-transport")
	require.Contains(t, out.String(), "inproc|metaroce|shm|tcp")
	require.Empty(t, errOut.String())
}

// The whole command, small, over each transport.
func TestRun(t *testing.T) {
	for _, transport := range []string{"inproc", "tcp", "metaroce"} {
		t.Run(transport, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-ranks", "3", "-transport", transport, "-samples", "301", "-epochs", "2", "-hidden", "8", "-batch", "7"}
			require.Equal(t, 0, run(args, &out, &errOut), "stdout:\n%s\nstderr:\n%s", &out, &errOut)
			require.Empty(t, errOut.String())
			text := out.String()
			require.Contains(t, text, "3 ranks over "+transport)
			require.Contains(t, text, "100 per rank, 1 not trained on")
			require.Equal(t, 3, strings.Count(text, "\nepoch "))
			require.Contains(t, text, "collective calls")
			require.Contains(t, text, "check (a): weights bitwise identical on all 3 ranks: ok\n")
			require.Regexp(t, `check \(b\): max \|data-parallel - single-process\| = \S+ \(limit 1e-05\): ok\n`, text)
			require.NotContains(t, text, "FAILED")
		})
	}
}

// parseConfig accepts only settings inside their documented limits, and
// never panics.
func FuzzParseConfig(f *testing.F) {
	f.Add("")
	f.Add("-ranks 2 -transport tcp")
	f.Add("-epochs 3 -hidden 8 -samples 100 -batch 7 -lr 0.1 -seed 42")
	f.Add("-ranks=64 -samples=64")
	f.Add("-lr 1e-300")
	f.Fuzz(func(t *testing.T, line string) {
		c, err := parseConfig(strings.Fields(line))
		if err != nil {
			return
		}
		require.NoError(t, c.validate())
		require.True(t, c.ranks >= 1 && c.ranks <= ranksMax)
		require.True(t, c.samples >= c.ranks && c.samples <= samplesMax)
		require.True(t, c.epochs >= 1 && c.hidden >= 1 && c.batch >= 1)
		require.True(t, c.lr > 0 && c.lr <= lrMax)
		require.Contains(t, transports, c.transport)
	})
}

// A small run; timings are left out of the printed lines since they vary.
func Example_run() {
	var out, errOut bytes.Buffer
	status := run([]string{"-ranks", "2", "-samples", "400", "-epochs", "3", "-hidden", "16"}, &out, &errOut)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "epoch") || strings.HasPrefix(line, "check (a)") {
			fmt.Println(line)
		}
		if strings.HasPrefix(line, "check (b)") {
			fmt.Println("check (b):", line[strings.LastIndex(line, " ")+1:])
		}
	}
	fmt.Println("exit status", status)
	// Output:
	// epoch   0  loss 1.0267  accuracy  32.8%
	// epoch   1  loss 0.8721  accuracy  49.2%
	// epoch   2  loss 0.8512  accuracy  48.5%
	// epoch   3  loss 0.8485  accuracy  48.0%
	// check (a): weights bitwise identical on all 2 ranks: ok
	// check (b): ok
	// exit status 0
}
