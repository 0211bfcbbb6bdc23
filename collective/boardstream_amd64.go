//go:build !race

package collective

import "unsafe"

// streamCopy16 copies n bytes from src to dst with non-temporal stores
// and a store fence after them (boardstream_amd64.s); n is a multiple of
// 64 and dst is 16-byte aligned.
//
//go:noescape
func streamCopy16(dst, src *byte, n int)

// streamCopy copies src into dst (at least as long) past the caches:
// non-temporal stores for the aligned middle, plain copies for the ends,
// all of it visible before any later store of this rank (a publish).
func streamCopy(dst, src []byte) {
	n := len(src)
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 15)
	if n < head+64 {
		copy(dst, src)
		return
	}
	copy(dst[:head], src[:head])
	bulk := (n - head) &^ 63
	streamCopy16(&dst[head], &src[head], bulk)
	copy(dst[head+bulk:n], src[head+bulk:n])
}
