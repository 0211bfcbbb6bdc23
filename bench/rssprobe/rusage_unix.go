//go:build unix

package main

import "golang.org/x/sys/unix"

// rusageSupported says whether peakMiB can read the peak RSS here: on
// every Unix it can.
func rusageSupported() error { return nil }

// peakMiB is the process's peak resident memory so far (getrusage
// ru_maxrss), 0 if unknown.
func peakMiB() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}
