//go:build amd64 && !purego

package reduce

import (
	"slices"

	"github.com/klauspost/cpuid/v2"
)

// The amd64 kernels are generated (internal/asmgen, with avo) into
// simd_amd64.s, simd_stubs_amd64.go and simd_table_amd64.go; a test fails
// if those differ from what the generator writes now.
//go:generate go run ./internal/asmgen/run -out .

// simdLevels lists the amd64 levels, best first. Where the CPU has AVX-512
// FP16 (Intel's since Sapphire Rapids; no AMD CPU yet), float16 kernels on
// half-precision lanes (VADDPH and its kin) replace the avx512 level's F16C
// ones, and fp8 sums and products through float16 its table lookups (their
// rounding moves bits with GFNI's GF2P8AFFINEQB, or the E4M3 product's
// VPSHLDW of AVX512_VBMI2: every AVX-512 FP16 CPU has both), and fp8 minimums and maximums whose order key is one
// GF2P8AFFINEQB replace the avx512 level's. The avx512 level computes fp8
// sums and products the same way with the float16 arithmetic done in
// float32 (VCVTPH2PS, VADDPS or VMULPS, VCVTPS2PH toward zero) and E4M3's
// bit moves by shifts: 3.5-5x the table gathers (which AVX2 kept until
// session 27; its fp8 sums and products now compute the same way, with
// 128-bit conversions: 1.6-2.3x the gathers on AMD Zen 3). Where
// the CPU has GFNI but not FP16 (AMD Zen 4 and 5, Intel's servers from Ice
// Lake without FP16), the avx512gfni level takes GF2P8AFFINEQB for those
// bit moves and for the fp8 min/max key (fp8 min/max 1.9x). AVX-512 BF16's VCVTNE2PS2BF16 is not used: the bfloat16 sum and
// product narrowed by it (with the fix-up its flushing of subnormals needs)
// measured no faster than the integer rounding.
func simdLevels() []simdLevel {
	c := &cpuid.CPU
	avx512 := c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX2, cpuid.F16C)
	return []simdLevel{
		{"avx512fp16", avx512 && c.Supports(cpuid.AVX512FP16, cpuid.GFNI, cpuid.AVX512VBMI2), avx512Block, slices.Concat(avx512Kernels, avx512fp16Kernels)},
		{"avx512gfni", avx512 && c.Supports(cpuid.GFNI), avx512Block, slices.Concat(avx512Kernels, avx512gfniKernels)},
		{"avx512", avx512, avx512Block, avx512Kernels},
		{"avx2", c.Supports(cpuid.AVX2, cpuid.F16C), avx2Block, avx2Kernels},
	}
}
