package reduce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/dtype"
)

// benchSizes are the bytes of one input vector: a chunk that stays in L2,
// and one that streams from memory.
var benchSizes = []struct {
	name  string
	bytes int
}{{"256KiB", 256 << 10}, {"64MiB", 64 << 20}}

// forceBenchLevel, where the architecture has levels, selects the one the
// -kernel-level flag names and returns the function that restores the
// start-up choice.
var forceBenchLevel func(b *testing.B) (restore func())

// benchBufs holds the accumulator and two inputs, shared by all
// sub-benchmarks (allocated once at the largest size).
var benchBufs [3][]byte

// BenchmarkKernel measures each active kernel in place, acc = acc op in, the
// inner step of a ring allreduce. Throughput counts the bytes of one input
// vector per call (b.SetBytes), like "float32 a+=b" in membw.c; memory
// traffic is about three times that (read a, read b, write a). Run one
// size with e.g. -bench 'Kernel/float32/sum/64MiB'.
func BenchmarkKernel(b *testing.B) {
	if forceBenchLevel != nil {
		defer forceBenchLevel(b)()
	}
	for _, dt := range dtype.All() {
		for _, op := range Ops() {
			for _, size := range benchSizes {
				b.Run(fmt.Sprintf("%v/%v/%s", dt, op, size.name), func(b *testing.B) {
					benchKernel(b, dt, op, size.bytes)
				})
			}
		}
	}
}

func benchKernel(b *testing.B, dt dtype.DataType, op Op, size int) {
	k, err := Lookup(dt, op)
	if err != nil {
		b.Fatal(err)
	}
	if benchBufs[0] == nil {
		for i := range benchBufs {
			benchBufs[i] = make([]byte, benchSizes[len(benchSizes)-1].bytes)
		}
	}
	acc, in := benchBufs[0][:size], [2][]byte{benchBufs[1][:size], benchBufs[2][:size]}
	fillBench(dt, op, acc, in)
	b.SetBytes(int64(size))
	b.ResetTimer()
	i := 0
	best := time.Duration(math.MaxInt64)
	for b.Loop() {
		start := time.Now()
		k(acc, acc, in[i&1])
		best = min(best, time.Since(start))
		i++
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	// The fastest call, like membw's best_GBs: on a machine shared with
	// other work it is the figure that compares across kernels and with C.
	b.ReportMetric(float64(size)/best.Seconds()/1e9, "best-GB/s")
}

// fillBench sets the accumulator to ones and the two inputs to values that
// undo each other (v and -v for sums, v and 1/v for products, with v a
// small power of two), which the benchmark alternates so that float
// accumulators stay normal numbers however long it runs. Integers are
// random (so min and max cannot predict their comparisons) and wrap.
func fillBench(dt dtype.DataType, op Op, acc []byte, in [2][]byte) {
	if !dt.IsFloat() {
		rng := rand.New(rand.NewPCG(uint64(dt), uint64(op)))
		for _, b := range [][]byte{acc, in[0], in[1]} {
			fillRandom(rng, b)
		}
		return
	}
	size := dt.Size()
	for i := 0; i < len(acc)/size; i++ {
		v := math.Ldexp(1, i%5-2)
		undo := -v
		if op == Prod {
			undo = 1 / v
		} else if op == Min || op == Max {
			undo = v
		}
		encodeFloat(dt, acc[i*size:], 1)
		encodeFloat(dt, in[0][i*size:], v)
		encodeFloat(dt, in[1][i*size:], undo)
	}
}
