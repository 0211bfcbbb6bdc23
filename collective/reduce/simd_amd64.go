//go:build amd64 && !purego

package reduce

import "github.com/klauspost/cpuid/v2"

// The amd64 kernels are generated (internal/asmgen, with avo) into
// simd_amd64.s, simd_stubs_amd64.go and simd_table_amd64.go; a test fails
// if those differ from what the generator writes now.
//go:generate go run ./internal/asmgen/run -out .

// simdLevels lists the amd64 levels, best first.
func simdLevels() []simdLevel {
	c := &cpuid.CPU
	return []simdLevel{
		{"avx512", c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX2, cpuid.F16C), avx512Block, avx512Kernels},
		{"avx2", c.Supports(cpuid.AVX2, cpuid.F16C), avx2Block, avx2Kernels},
	}
}
