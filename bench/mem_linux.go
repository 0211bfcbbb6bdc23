//go:build linux

package bench

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocBuffer returns n bytes of anonymous memory outside the Go heap,
// advised to use transparent huge pages (faulting 4 KiB pages in costs about
// 11 us each on the machines this was measured on; a huge page fault covers
// 512 of them), and the function that unmaps it. The caller faults the
// pages in by writing them before timing anything.
func allocBuffer(n int64) ([]byte, func(), error) {
	if n == 0 {
		return []byte{}, func() {}, nil
	}
	// A whole number of huge pages, which Linux places on a huge-page
	// boundary, so that the last part of the buffer can be one too.
	const hugePage = 2 << 20
	b, err := unix.Mmap(-1, 0, int((n+hugePage-1)&^(hugePage-1)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, fmt.Errorf("allocating a %d-byte buffer: %w", n, err)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: THP may be off
	return b[:n:n], func() { _ = unix.Munmap(b) }, nil
}

// peakRSS is this process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) << 10 // Linux reports KiB
}

// physicalMemory is the machine's RAM in bytes, or 0 if unknown.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
