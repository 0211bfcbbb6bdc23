package bench

import (
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// Check-mode data. Every input element is a small non-negative integer
// chosen so that every result, whatever order the ranks' contributions are
// combined in, is exact in the data type: the expected value of each output
// element is computed in closed form, never by repeating the reduction.
//
// Inputs: rank r's element at global index i is (r+i) mod m, for every
// collective and every op but Prod. Sum and Avg pick m so that n·(m-1) fits
// the type exactly; Min, Max and the data-moving collectives use m =
// patternModMax, or exactMax+1 where that is smaller (the fp8 types). If
// even m = 2 would not fit (bfloat16 beyond 256 ranks, E5M2 beyond 8),
// Sum and Avg use an indicator instead: 1 where (r+i) mod n = 0, else 0,
// whose sum is 1. Prod multiplies ones and twos: element i is 2 on exactly
// k_i = i mod (K+1) ranks, so the product is 2^k_i, K = min(n, 6).
//
// No expected value has its top bit set, so buffers poisoned with 0xff bytes
// (NaN in every float type, -1 or above every expected value in integers)
// never pass for a result.

// patternModMax is the largest modulus of the input pattern (a prime, so
// that blocks of power-of-two length do not repeat in step with it).
const patternModMax = 101

// prodPowMax bounds the power of two a Prod result reaches.
const prodPowMax = 6

// poisonByte fills output buffers before a checked operation.
const poisonByte = 0xff

// exactMax is the largest L such that every integer in [0, L] is exact in
// t and encodes with its top bit clear.
func exactMax(t dtype.DataType) int64 {
	switch t {
	case dtype.Float32:
		return 1 << 24
	case dtype.Float64:
		return 1 << 53
	case dtype.BFloat16Type:
		return 1 << 8
	case dtype.Float16Type:
		return 1 << 11
	case dtype.Float8E4M3Type:
		return 1 << 4
	case dtype.Float8E5M2Type:
		return 1 << 3
	case dtype.Int8, dtype.Uint8:
		return 1<<7 - 1
	case dtype.Int32, dtype.Uint32:
		return 1<<31 - 1
	}
	return 1 << 62
}

// scalar is the exact value num/den (den ≥ 1) that an element should hold;
// den > 1 only for Avg, whose division rounds as the data type does.
type scalar struct {
	num int64
	den int64
}

// pattern generates the inputs of one check and their expected results.
type pattern struct {
	op        reduce.Op // reduction, or 0 for data-moving collectives
	ranks     int
	mod       int64 // modulus m of (r+i) mod m; 0 selects the indicator
	prodRanks int64 // K of the Prod pattern
}

// newPattern returns the pattern for a collective over ranks ranks of type
// t that reduces with op (op is ignored when reduces is false).
func newPattern(t dtype.DataType, op reduce.Op, reduces bool, ranks int) pattern {
	p := pattern{ranks: ranks, mod: min(patternModMax, exactMax(t)+1)}
	if !reduces {
		return p
	}
	p.op = op
	switch op {
	case reduce.Sum, reduce.Avg:
		p.mod = min(patternModMax, exactMax(t)/int64(ranks)+1)
		if p.mod < 2 {
			p.mod = 0
		}
	case reduce.Prod:
		p.prodRanks = min(int64(ranks), prodPowMax)
	}
	return p
}

// input is rank r's element at global index i.
func (p pattern) input(r int, i int64) int64 {
	n := int64(p.ranks)
	switch {
	case p.op == reduce.Prod:
		if (int64(r)+i)%n < i%(p.prodRanks+1) {
			return 2
		}
		return 1
	case p.mod == 0:
		if (int64(r)+i)%n == 0 {
			return 1
		}
		return 0
	}
	return (int64(r) + i) % p.mod
}

// reduced is the expected reduction over all ranks at global index i.
func (p pattern) reduced(i int64) scalar {
	n, m := int64(p.ranks), p.mod
	if p.op == reduce.Prod {
		return scalar{num: 1 << (i % (p.prodRanks + 1)), den: 1}
	}
	if m == 0 { // indicator (Sum and Avg only): exactly one rank holds 1
		if p.op == reduce.Avg {
			return scalar{num: 1, den: n}
		}
		return scalar{num: 1, den: 1}
	}
	a := i % m
	switch p.op {
	case reduce.Min:
		if n >= m || a+n-1 >= m {
			return scalar{num: 0, den: 1}
		}
		return scalar{num: a, den: 1}
	case reduce.Max:
		if n >= m || a+n-1 >= m {
			return scalar{num: m - 1, den: 1}
		}
		return scalar{num: a + n - 1, den: 1}
	}
	// Sum of (r+i) mod m over r in [0, n): q whole cycles, then s values
	// from a on, wrapping past m at most once.
	q, s := n/m, n%m
	sum := q*m*(m-1)/2 + s*a + s*(s-1)/2 - m*max(0, a+s-m)
	if p.op == reduce.Avg {
		return scalar{num: sum, den: n}
	}
	return scalar{num: sum, den: 1}
}
