package reduce

import (
	"fmt"
	"unsafe"
)

// view returns b's bytes as a []T in place. b must be aligned for T and its
// length a multiple of T's size.
func view[T any](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

// aligned reports whether every slice starts at a multiple of size.
func aligned(size int, bufs ...[]byte) bool {
	for _, b := range bufs {
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) != 0 {
			return false
		}
	}
	return true
}

// typed turns a loop over typed slices into a Kernel on bytes. Aligned
// buffers are viewed in place; misaligned ones go through aligned scratch.
func typed[T any](loop func(dst, a, b []T)) Kernel {
	var zero T
	size := int(unsafe.Sizeof(zero))
	return func(dst, a, b []byte) {
		if len(a) != len(dst) || len(b) != len(dst) || len(dst)%size != 0 {
			panic(fmt.Sprintf("reduce: kernel called with len(dst)=%d, len(a)=%d, len(b)=%d, element size %d",
				len(dst), len(a), len(b), size))
		}
		if size == 1 || aligned(size, dst, a, b) {
			loop(view[T](dst), view[T](a), view[T](b))
			return
		}
		loopViaScratch(loop, size, dst, a, b)
	}
}

// scratchBytes is the chunk size of the misaligned path (per buffer).
const scratchBytes = 4096

// loopViaScratch runs loop over misaligned buffers chunk by chunk, copying
// each chunk of a and b to aligned scratch before writing dst, so dst may
// be exactly a or b.
func loopViaScratch[T any](loop func(dst, a, b []T), size int, dst, a, b []byte) {
	scratch := make([]uint64, 3*scratchBytes/8)
	whole := unsafe.Slice((*byte)(unsafe.Pointer(&scratch[0])), 3*scratchBytes)
	sd, sa, sb := whole[:scratchBytes], whole[scratchBytes:2*scratchBytes], whole[2*scratchBytes:]
	chunk := scratchBytes / size * size
	for off := 0; off < len(dst); off += chunk {
		n := min(chunk, len(dst)-off)
		copy(sa, a[off:off+n])
		copy(sb, b[off:off+n])
		loop(view[T](sd[:n]), view[T](sa[:n]), view[T](sb[:n]))
		copy(dst[off:off+n], sd[:n])
	}
}

// inPlaceTyped runs f over buf viewed as a []T, through aligned scratch if
// buf is misaligned. len(buf) must be a multiple of T's size.
func inPlaceTyped[T any](buf []byte, f func([]T)) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 1 || aligned(size, buf) {
		f(view[T](buf))
		return
	}
	scratch := make([]uint64, scratchBytes/8)
	s := unsafe.Slice((*byte)(unsafe.Pointer(&scratch[0])), scratchBytes)
	chunk := scratchBytes / size * size
	for off := 0; off < len(buf); off += chunk {
		n := min(chunk, len(buf)-off)
		copy(s, buf[off:off+n])
		f(view[T](s[:n]))
		copy(buf[off:off+n], s[:n])
	}
}
