package reduce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
)

// TestHalfProductsNearUnderflow checks products whose float32 value is
// subnormal or near bfloat16's and float16's smallest values, where rounding
// twice (exact → float32 → 16 bits) could differ from rounding once; random
// data rarely lands there.
func TestHalfProductsNearUnderflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	cases := []struct {
		dt         dtype.DataType
		lowExp, hi int // exponent range of the product
	}{
		{dtype.BFloat16Type, -152, -120},
		{dtype.Float16Type, -27, -12},
	}
	for _, c := range cases {
		const n = 100000
		a, b := make([]byte, 2*n), make([]byte, 2*n)
		for i := 0; i < n; i++ {
			e1 := rng.IntN(20) - 10
			e2 := c.lowExp + rng.IntN(c.hi-c.lowExp) - e1
			sign := float64(rng.IntN(2)*2 - 1)
			encodeFloat(c.dt, a[2*i:], sign*math.Ldexp(1+rng.Float64(), e1))
			encodeFloat(c.dt, b[2*i:], math.Ldexp(1+rng.Float64(), e2))
		}
		k, err := Lookup(c.dt, Prod)
		if err != nil {
			t.Fatal(err)
		}
		requireSameElements(t, c.dt, c.dt.String()+" prod near underflow", run(k, separate, a, b), reference(c.dt, Prod, a, b))
	}
}
