//go:build arm64 && !purego

package reduce

// The arm64 kernels are generated (internal/neongen) into simd_arm64.s and
// simd_neon_arm64.go; a test fails if those differ from what the generator
// writes now.
//go:generate go run ./internal/neongen/run -out .

// simdLevels lists the arm64 levels. Advanced SIMD, with the float16
// conversions FCVTL and FCVTN, is part of every ARMv8-A CPU, which Go
// requires, so the one level always runs.
func simdLevels() []simdLevel {
	return []simdLevel{{"neon", true, neonBlock, neonKernels}}
}
