package crc32c

import "github.com/klauspost/cpuid/v2"

// useFold says whether Update folds long inputs: AVX-512 (F) with
// VPCLMULQDQ on 512-bit registers, enabled by the OS, and SSE 4.2's CRC32
// for the end. klauspost/cpuid, as the reduction kernels' choice
// (collective/reduce), reports AVX-512 only where the OS saves its state.
var useFold = cpuid.CPU.Supports(cpuid.AVX512F, cpuid.VPCLMULQDQ, cpuid.SSE42)

// fold returns the CRC register (not inverted) of p (at least 512
// bytes) from register crc. The first 256 bytes, with crc XORed into the
// first 4, are the state at first: 4 x 64 bytes; each following 256 bytes
// are XORed with the state moved 256 bytes ahead by the multipliers
// k[0:8] (foldConsts); then the state's 4 x 64 bytes are folded into
// one, 64 bytes ahead each (k[8:16]), and so is each 64 bytes left of p.
// The state's last 64 bytes, whose register from zero is the register of
// the bytes folded, and the last under 64 bytes of p go through the CRC32
// instruction. Nothing of p is kept.
//
//go:noescape
func fold(crc uint32, p []byte, k *[16]uint64) uint32

// updateFold is Update for an input of at least foldMin bytes on a
// processor with the instructions.
func updateFold(crc uint32, p []byte) uint32 {
	return ^fold(^crc, p, &foldConsts)
}
