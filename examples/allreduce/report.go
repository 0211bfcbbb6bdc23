package main

import (
	"fmt"
	"io"
	"time"
)

// Tolerances of check (b), relative to the largest weight.
const (
	toleranceFloat32 = 1e-4
	toleranceBF16    = 5e-3
)

// tolerance is check (b)'s bound for cfg.
func tolerance(cfg config) float64 {
	if cfg.bf16 {
		return toleranceBF16
	}
	return toleranceFloat32
}

// printHeader describes the job about to run.
func printHeader(w io.Writer, cfg config, how string) {
	m := newMLP(cfg)
	wire := "float32"
	if cfg.bf16 {
		wire = "bfloat16"
	}
	fmt.Fprintf(w, "data-parallel training: %d ranks as %s\n", cfg.ranks, how)
	fmt.Fprintf(w, "model: MLP %s, %d layers, %d float32 parameters; gradients sent as %s in buckets of %d KiB (the first %d KiB)\n",
		m, m.layers(), m.numParams(), wire, cfg.bucketKiB, ddpConfig(cfg).FirstBucketBytes>>10)
	lo, hi := shard(0, cfg.ranks, cfg.samples)
	fmt.Fprintf(w, "data: %d samples (seed %d), %d-%d per rank; batch %d per rank (%d global), lr %g, %d epochs\n",
		cfg.samples, cfg.seed, hi-lo, (cfg.samples+cfg.ranks-1)/cfg.ranks, cfg.batch, cfg.batch*cfg.ranks, cfg.lr, cfg.epochs)
}

// perStep is d divided among n steps.
func perStep(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(10 * time.Microsecond)
}

// printReport prints rank 0's timings and check (a); it returns whether
// the check passed.
func printReport(w io.Writer, cfg config, res rankResult, differing int) bool {
	s := res.stats
	grads := 4 * newMLP(cfg).numParams()
	fmt.Fprintf(w, "time per step on rank 0: %v over %d steps, %.0f samples/s (forward and backward %v, waiting for gradients %v); %.1f MB of gradients in %d buckets a step\n",
		perStep(res.train, res.steps), res.steps, rate(cfg.samples*cfg.epochs, res.train),
		perStep(res.compute, res.steps), perStep(s.Wait, s.Steps), float64(grads)/1e6, res.buckets)
	fmt.Fprintf(w, "communication: %v per step, %.0f%% of it hidden behind backward\n",
		perStep(s.Comm, s.Steps), 100*s.Hidden())
	if differing >= 0 {
		fmt.Fprintf(w, "check (a): weights of rank %d differ from rank 0's: FAILED\n", differing)
		return false
	}
	fmt.Fprintf(w, "check (a): weights bitwise identical on all %d ranks: ok\n", cfg.ranks)
	return true
}

// printReference prints the reference's time and check (b); it returns
// whether the check passed.
func printReference(w io.Writer, cfg config, res rankResult, ref reference) bool {
	speedup := 0.0
	if res.train > 0 {
		speedup = ref.train.Seconds() / res.train.Seconds()
	}
	fmt.Fprintf(w, "single-process reference: %v per step of the same global batches (%d steps), %.0f samples/s; data-parallel speed-up %.2fx\n",
		perStep(ref.train, ref.steps), ref.steps, rate(cfg.samples*cfg.epochs, ref.train), speedup)
	diff := relativeDiff(flatten(res.params), flatten(ref.params))
	verdict := "ok"
	ok := diff <= tolerance(cfg)
	if !ok {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "check (b): max |data-parallel - single-process| / max |weight| = %.3g (limit %g): %s\n", diff, tolerance(cfg), verdict)
	return ok
}

// rate is samples per second.
func rate(samples int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(samples) / d.Seconds()
}
