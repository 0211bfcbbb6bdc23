package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// Each folding code the processor runs agrees with hash/crc32, called
// directly: Update takes only the widest, so on an AVX-512 processor the
// AVX2 code would otherwise go untested.
func TestFoldsAgree(t *testing.T) {
	folds := map[string]struct{ ok, wide bool }{"avx512": {has512, true}, "avx2": {has256, false}}
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 9100)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for name, k := range folds {
		if !k.ok {
			t.Logf("%s: not on this processor", name)
			continue
		}
		for n := foldMin; n <= len(buf)-64; n += 1 + n/64 {
			for _, off := range []int{0, 1, 33, 63} {
				crc := rng.Uint32()
				p := buf[off : off+n]
				if got, want := ^fold(^crc, p, &foldConsts, k.wide), crc32.Update(crc, table, p); got != want {
					t.Fatalf("%s(%#x, %d bytes at +%d) = %#x, want %#x", name, crc, n, off, got, want)
				}
			}
		}
	}
}
