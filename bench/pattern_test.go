package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// bruteReduce folds the inputs of every rank at index i with op, in exact
// integer arithmetic.
func bruteReduce(p pattern, i int64) scalar {
	acc := p.input(0, i)
	for r := 1; r < p.ranks; r++ {
		v := p.input(r, i)
		switch p.op {
		case reduce.Sum, reduce.Avg:
			acc += v
		case reduce.Prod:
			acc *= v
		case reduce.Min:
			acc = min(acc, v)
		case reduce.Max:
			acc = max(acc, v)
		}
	}
	if p.op == reduce.Avg {
		return scalar{num: acc, den: int64(p.ranks)}
	}
	return scalar{num: acc, den: 1}
}

// TestReducedMatchesBruteForce checks the closed forms of the expected
// results against folding the inputs, for every type, op and many world
// sizes (including those that switch Sum to the indicator pattern).
func TestReducedMatchesBruteForce(t *testing.T) {
	for _, dt := range dtype.All() {
		for _, op := range reduce.Ops() {
			for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 13, 64, 100, 101, 102, 129, 257, 300} {
				p := newPattern(dt, op, true, n)
				limit := exactMax(dt)
				if op == reduce.Prod { // powers of two, exact in every type
					limit = max(limit, 1<<prodPowMax)
				}
				for i := range int64(2*patternModMax + 3) {
					want, got := bruteReduce(p, i), p.reduced(i)
					if want != got || got.num < 0 || got.num > limit {
						t.Fatalf("%v %v n=%d i=%d: reduced %v, brute force %v, exact up to %d", dt, op, n, i, got, want, limit)
					}
					for r := range n {
						if v := p.input(r, i); v < 0 || v > limit {
							t.Fatalf("%v %v n=%d: input(%d, %d) = %d beyond %d", dt, op, n, r, i, v, limit)
						}
					}
				}
			}
		}
	}
}

// TestPatternVaries makes sure the check would notice a rank's data going
// missing: inputs differ between ranks and between indices.
func TestPatternVaries(t *testing.T) {
	for _, op := range reduce.Ops() {
		p := newPattern(dtype.Float32, op, true, 4)
		distinct := map[scalar]bool{}
		for i := range int64(50) {
			distinct[p.reduced(i)] = true
		}
		require.Greater(t, len(distinct), 2, "%v results are nearly constant", op)
	}
	p := newPattern(dtype.BFloat16Type, 0, false, 4)
	require.NotEqual(t, p.input(0, 5), p.input(1, 5))
}

// TestCodecRoundTrip writes expected values and reads them back as the
// reduction kernels would produce them.
func TestCodecRoundTrip(t *testing.T) {
	for _, dt := range dtype.All() {
		c := codecOf(dt)
		buf := make([]byte, 3*c.size)
		step := min(10, exactMax(dt)/8) // the fp8 types: integers exact up to 16 and 8
		c.fill(buf, func(j int64) int64 { return step * (j + 1) })
		require.Zero(t, c.countWrong(buf, func(j int64) scalar { return exact(step * (j + 1)) }), "%v", dt)
		require.Equal(t, int64(3), c.countWrong(buf, func(j int64) scalar { return exact(step*(j+1) + 1) }), "%v", dt)
		// Avg: the kernel's division of the sum.
		sum := make([]byte, c.size)
		c.put(sum, exact(7))
		require.NoError(t, reduce.DivideBy(dt, sum, 3))
		require.Zero(t, c.countWrong(sum, func(int64) scalar { return scalar{num: 7, den: 3} }), "%v avg", dt)
		poison(buf)
		require.Equal(t, int64(3), c.countWrong(buf, func(int64) scalar { return exact(0) }), "%v poison", dt)
	}
}

// TestGeometry follows nccl-tests' sizes: blocked collectives cut count
// into n blocks, the size shrinks to whole blocks, and the peers' rounding
// goes up instead.
func TestGeometry(t *testing.T) {
	cases := []struct {
		k       collKind
		req     int64
		n       int
		roundUp bool
		want    geometry
	}{
		{collAllReduce, 1 << 20, 4, false, geometry{bytes: 1 << 20, count: 1 << 18, block: 1 << 20}},
		{collAllReduce, 7, 4, false, geometry{bytes: 4, count: 1, block: 4}},
		{collAllGather, 1 << 20, 4, false, geometry{bytes: 1 << 20, count: 1 << 16, block: 1 << 18}},
		{collReduceScatter, 100, 3, false, geometry{bytes: 96, count: 8, block: 32}},
		{collAllToAll, 8, 4, false, geometry{bytes: 0, count: 0, block: 0}},
		{collAllToAll, 8, 4, true, geometry{bytes: 16, count: 1, block: 4}},
		{collSendRecv, 1024, 2, false, geometry{bytes: 1024, count: 256, block: 1024}},
	}
	for _, c := range cases {
		got := c.k.info().geometryFor(c.req, dtype.Float32, c.n, c.roundUp)
		require.Equal(t, c.want, got, "%v %d n=%d", c.k, c.req, c.n)
	}
}

// TestBusFactors are nccl-tests' (doc/PERFORMANCE.md).
func TestBusFactors(t *testing.T) {
	want := map[collKind]float64{collAllReduce: 1.5, collBroadcast: 1, collReduce: 1, collAllGather: 0.75,
		collReduceScatter: 0.75, collAllToAll: 0.75, collSendRecv: 1}
	for k := range numColls {
		require.InDelta(t, want[k], k.info().busFactor(4), 1e-12, "%v", k)
	}
}

func ExampleParseSize() {
	for _, s := range []string{"8", "64K", "1M", "2GiB", "1Q"} {
		n, err := ParseSize(s)
		fmt.Println(n, err)
	}
	// Output:
	// 8 <nil>
	// 65536 <nil>
	// 1048576 <nil>
	// 2147483648 <nil>
	// 0 size "1Q": unknown unit "Q" (want K, M or G)
}
