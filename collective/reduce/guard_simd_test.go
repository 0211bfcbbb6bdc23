//go:build linux && (amd64 || arm64) && !purego

package reduce

import (
	"bytes"
	"math/rand/v2"
	"syscall"
	"testing"
)

// guarded returns n bytes (a multiple of the page size) that begin right
// after and end right before a page no access is allowed to, so a kernel
// that touches a byte outside them faults.
func guarded(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	m, err := syscall.Mmap(-1, 0, n+2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	for _, g := range [][]byte{m[:page], m[page+n:]} {
		if err := syscall.Mprotect(g, syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
	}
	return m[page : page+n]
}

// TestLevelFloat8GuardPages forces each supported level and runs every fp8
// op with dst, a and b each between two pages no access is allowed to, out
// of place and in place, against the portable kernels: a kernel may not
// read or write outside its slices (the AVX-512 FP16 E4M3 sum stores its
// even elements' bytes with a masked store one byte below dst, whose byte
// below dst is masked out).
func TestLevelFloat8GuardPages(t *testing.T) {
	n := syscall.Getpagesize()
	r := rand.New(rand.NewPCG(5, 6))
	a, b, dst := guarded(t, n), guarded(t, n), guarded(t, n)
	for i := range a {
		a[i], b[i] = byte(r.Uint32()), byte(r.Uint32())
	}
	eachFP8Kernel(t, func(what string, f fp8Case, op Op, fast, slow Kernel) {
		want := make([]byte, n)
		slow(want, a, b)
		fast(dst, a, b)
		if !bytes.Equal(dst, want) {
			t.Fatalf("%s: results differ from portable", what)
		}
		copy(dst, a)
		fast(dst, dst, b)
		if !bytes.Equal(dst, want) {
			t.Fatalf("%s: dst = a differs from portable", what)
		}
	})
}
