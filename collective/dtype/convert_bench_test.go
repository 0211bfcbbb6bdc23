package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchInputs returns 4096 random float32s of moderate magnitude (normal in
// both 16-bit formats), the common case in reductions.
func benchInputs() []float32 {
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([]float32, 4096)
	for i := range xs {
		xs[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(20)-10))
	}
	return xs
}

var sinkHalf uint16
var sinkFloat float32

func BenchmarkFloat16FromFloat32(b *testing.B) {
	xs := benchInputs()
	b.SetBytes(int64(len(xs)))
	for b.Loop() {
		for _, x := range xs {
			sinkHalf += uint16(Float16FromFloat32(x))
		}
	}
}

func BenchmarkBFloat16FromFloat32(b *testing.B) {
	xs := benchInputs()
	b.SetBytes(int64(len(xs)))
	for b.Loop() {
		for _, x := range xs {
			sinkHalf += uint16(BFloat16FromFloat32(x))
		}
	}
}

func BenchmarkFloat16ToFloat32(b *testing.B) {
	xs := benchInputs()
	hs := make([]Float16, len(xs))
	for i, x := range xs {
		hs[i] = Float16FromFloat32(x)
	}
	b.SetBytes(int64(len(hs)))
	for b.Loop() {
		for _, h := range hs {
			sinkFloat += h.Float32()
		}
	}
}

func BenchmarkFloat16FromFloat64(b *testing.B) {
	xs := benchInputs()
	b.SetBytes(int64(len(xs)))
	for b.Loop() {
		for _, x := range xs {
			sinkHalf += uint16(Float16FromFloat64(float64(x)))
		}
	}
}
