//go:build linux

package collective

import (
	"bytes"
	"runtime/debug"
	"syscall"
	"testing"
)

// TestCopyChangedLeavesHeldBlocks: copyChanged writes no block that dst
// holds already (a write would fault here: that block's page is read
// only), and writes every block that differs, the last one short.
func TestCopyChangedLeavesHeldBlocks(t *testing.T) {
	const pages = 3
	mem, err := syscall.Mmap(-1, 0, pages*changedBlock, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer func() { _ = syscall.Munmap(mem) }()
	for i := range mem {
		mem[i] = byte(i * 5)
	}
	n := pages*changedBlock - 100 // the last block short
	src := bytes.Clone(mem[:n])
	src[10]++                              // block 0 differs at its start
	src[2*changedBlock+changedBlock-101]++ // block 2 (short) at its end
	// Block 1 is the same: its page read only.
	if err := syscall.Mprotect(mem[changedBlock:2*changedBlock], syscall.PROT_READ); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("copyChanged wrote a block dst held already: %v", r)
			}
		}()
		copyChanged(mem[:n], src)
	}()
	if !bytes.Equal(mem[:n], src) {
		t.Fatal("dst differs from src after copyChanged")
	}
}

// BenchmarkCopyChanged is copyChanged against a plain copy, 64 KiB in
// cache: data the same as dst's (same), new in every block from its
// first byte (new: as a buffer written anew), or new only in each
// block's last byte (last: the comparisons' worst case).
func BenchmarkCopyChanged(b *testing.B) {
	const n = 64 << 10
	var pats [2][]byte
	for i := range pats {
		pats[i] = make([]byte, n)
		for j := range pats[i] {
			pats[i][j] = byte(j*7 + i)
		}
	}
	last := [2][]byte{bytes.Clone(pats[0]), bytes.Clone(pats[0])}
	for k := changedBlock - 1; k < n; k += changedBlock {
		last[1][k]++
	}
	for _, tc := range []struct {
		name string
		src  [2][]byte
		copy func(dst, src []byte)
	}{
		{"copy", pats, func(dst, src []byte) { copy(dst, src) }},
		{"same", [2][]byte{pats[0], pats[0]}, copyChanged},
		{"new", pats, copyChanged},
		{"last", last, copyChanged},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dst := bytes.Clone(tc.src[1])
			b.SetBytes(n)
			for i := 0; b.Loop(); i++ {
				tc.copy(dst, tc.src[i%2])
			}
		})
	}
}
