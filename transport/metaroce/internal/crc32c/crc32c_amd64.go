package crc32c

import "golang.org/x/sys/cpu"

// useFold says whether Update folds long inputs: AVX-512 (F) with
// VPCLMULQDQ on 512-bit registers, enabled by the OS.
var useFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ

// fold folds p (a multiple of 64 bytes, at least 512) into the 64 bytes
// of state, so that the CRC of state from a zero register is p's from
// crc (a CRC register, not inverted). The first 256 bytes, with crc XORed
// into the first 4, are the state at first; each following 256 bytes are
// XORed with the state moved 256 bytes ahead by the multipliers k[0:8]
// (foldConsts); then, while any is left, each 64 bytes with its last 64
// bytes moved 64 bytes ahead (k[8:16]), first the state's own.
//
//go:noescape
func fold(state *[foldLane]byte, crc uint32, p []byte, k *[16]uint64)

// updateFold is Update for an input of at least foldMin bytes on a
// processor with the instructions.
func updateFold(crc uint32, p []byte) uint32 {
	var state [foldLane]byte
	n := len(p) &^ (foldLane - 1)
	fold(&state, ^crc, p[:n], &foldConsts)
	return finish(state[:], p[n:])
}
