package crc32c

import "github.com/klauspost/cpuid/v2"

// has512 and has256 say which folding code the processor runs: AVX-512
// (F) with VPCLMULQDQ on 512-bit registers (fold's wide code), or else
// AVX2 with VPCLMULQDQ on 256-bit ones (AMD Zen 3, or Intel processors
// with AVX-512 off); both with SSE 4.2's CRC32 for the
// end. klauspost/cpuid, as the reduction kernels' choice
// (collective/reduce), reports AVX-512 and AVX2 only where the OS saves
// their state. useFold says whether Update folds long inputs at all.
var (
	has512  = cpuid.CPU.Supports(cpuid.AVX512F, cpuid.VPCLMULQDQ, cpuid.SSE42)
	has256  = cpuid.CPU.Supports(cpuid.AVX2, cpuid.VPCLMULQDQ, cpuid.SSE42)
	useFold = has512 || has256
)

// fold returns the CRC register (not inverted) of p (at least 512
// bytes) from register crc, in 512-bit registers if wide (has512), else
// in 256-bit ones (has256), with the same steps and result. The first 256 bytes, with crc XORed into the
// first 4, are the state at first: 4 x 64 bytes; each following 256 bytes
// are XORed with the state moved 256 bytes ahead by the multipliers
// k[0:8] (foldConsts); then the state's 4 x 64 bytes are folded into
// one, 64 bytes ahead each (k[8:16]), and so is each 64 bytes left of p.
// The state's last 64 bytes, whose register from zero is the register of
// the bytes folded, and the last under 64 bytes of p go through the CRC32
// instruction. Nothing of p is kept.
//
//go:noescape
func fold(crc uint32, p []byte, k *[16]uint64, wide bool) uint32

// updateFold is Update for an input of at least foldMin bytes on a
// processor with the instructions.
func updateFold(crc uint32, p []byte) uint32 {
	return ^fold(^crc, p, &foldConsts, has512)
}
