// Package reduce holds the element-wise reduction kernels of gocoll: one
// [Kernel] per (data type, [Op]) pair, computing dst[i] = a[i] op b[i] on raw
// little-endian bytes. They are the inner loop of ring and tree allreduce.
//
// Getting a kernel. [Lookup] returns the fastest kernel this host has for a
// pair; [Portable] returns the pure-Go one, always available, which the
// fast ones must match. Call [Apply] instead when the buffers come from
// outside a hot loop: it checks lengths and overlap and returns an error
// where a Kernel would panic.
//
// Semantics, for every kernel:
//   - Integers wrap on overflow (two's complement, like Go's own + and *),
//     for sum and prod; min and max are exact.
//   - float32 and float64 follow Go arithmetic: IEEE 754 round to nearest
//     even. Min and max follow Go's builtin min and max: a NaN operand gives
//     a NaN, and -0 orders below +0.
//   - bfloat16 and float16 elements are widened to float32 (exactly),
//     combined there, and rounded once to nearest even; for sum and prod the
//     result equals the exactly rounded one. NaN results are quiet NaNs.
//   - float8e4m3 and float8e5m2 elements are widened to float32 (exactly),
//     combined there (sums and products exactly) and rounded once to
//     nearest even. E4M3 has no infinities: a result beyond ±448 saturates
//     to ±448 (as CUDA's __NV_SATFINITE conversions, which NCCL's fp8
//     reductions use); E5M2 overflows to ±Inf.
//   - A sum or product with a NaN operand returns a's NaN if a is one,
//     else b's (quieted; for the 16-bit types then narrowed), whatever
//     operand order the compiler picks; which NaN Min and Max, and a NaN
//     made from numbers (Inf - Inf), carry is the host's, unspecified.
//   - Avg reduces like Sum; [DivideBy] then divides the final sum by the
//     number of contributions.
//
// Host. The kernels view byte slices as typed slices in place (no copies),
// which needs a little-endian host: the package does not build on
// big-endian architectures and its init panics if it finds itself on one.
// Buffers aligned to the element size (as Go allocates them) take the fast
// path; misaligned ones are correct but slower.
//
// Acceleration. The active kernels live in a table filled from the
// portable ones; an architecture-specific init replaces entries by calling
// the unexported override. On amd64 the replacements are generated with
// avo (internal/asmgen writes simd_amd64.s and its Go tables; a test fails
// if they are stale) at two levels, AVX-512 (F, BW, DQ) and AVX2, both
// with F16C, and a third, "avx512fp16" (with GFNI), whose float16 kernels
// and fp8 sums and products compute on half-precision lanes with AVX-512
// FP16 (Go's assembler lacks those instructions: the generator encodes
// them as bytes, and a test checks the encodings against binutils'
// objdump), and between them "avx512gfni" (AVX-512 with GFNI, no FP16:
// AMD's Zen 4 and 5), whose fp8 kernels move bits with GF2P8AFFINEQB;
// the best level the CPU has is chosen at start-up with
// klauspost/cpuid, and [KernelLevel] names it (GOCOLL_DEBUG=info logs it).
// Every data type and operation has a vector kernel at every amd64 level
// (the fp8 sums and products compute on float16 lanes at avx512fp16 and
// widen to float16 and compute in float32 at avx512gfni, avx512 and avx2;
// fp8 min and max compute on bytes; bfloat16 and float16 min
// and max at AVX2 and AVX-512 compare 16-bit integers, NaNs out of line), and
// each gives the portable result bit for bit, NaN payloads included: tests
// force each level and compare. The fp8 types stay portable on arm64. On arm64 one level, "neon" (Advanced SIMD, which
// every ARMv8-A CPU has), covers the same data types and operations;
// internal/neongen writes simd_arm64.s (vector instructions as WORDs, Go's
// assembler lacks most of them) and its table, and test.sh runs the same
// level tests under qemu-user. The purego build tag keeps the portable
// kernels.
package reduce
