package collective

import (
	"bytes"
	"testing"
)

// TestStreamCopy: streamCopy copies exactly src, at every alignment of
// dst and src and at lengths around its 64-byte steps, leaving the bytes
// of dst past src alone.
func TestStreamCopy(t *testing.T) {
	src := make([]byte, 4096+64)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	for _, n := range []int{0, 1, 15, 63, 64, 65, 79, 80, 127, 128, 129, 1000, 4096} {
		for da := 0; da < 16; da += 3 {
			for sa := 0; sa < 16; sa += 5 {
				dst := make([]byte, n+da+32)
				want := bytes.Clone(dst)
				copy(want[da:], src[sa:sa+n])
				streamCopy(dst[da:da+n+16], src[sa:sa+n])
				if !bytes.Equal(dst, want) {
					t.Fatalf("n=%d dst+%d src+%d: copy differs", n, da, sa)
				}
			}
		}
	}
}
