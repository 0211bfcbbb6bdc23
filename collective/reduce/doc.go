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
//     Which NaN (sign, payload) a NaN result carries is unspecified.
//   - Avg reduces like Sum; [DivideBy] then divides the final sum by the
//     number of contributions.
//
// Host. The kernels view byte slices as typed slices in place (no copies),
// which needs a little-endian host: the package does not build on
// big-endian architectures and its init panics if it finds itself on one.
// Buffers aligned to the element size (as Go allocates them) take the fast
// path; misaligned ones are correct but slower.
//
// Acceleration seam. The active kernels live in a table filled from the
// portable ones; an architecture-specific file (say kernels_amd64.go, with
// assembly or SIMD code) replaces entries from its init function by calling
// the unexported override. Tests compare every active kernel with the
// portable one, which stays available through Portable.
package reduce
