//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// rusageSupported says whether peakMiB can read the peak RSS here: on
// every Unix it can.
func rusageSupported() error { return nil }

// peakMiB is the process's peak resident memory so far, 0 if unknown:
// Linux's VmHWM, else getrusage's ru_maxrss. On Linux ru_maxrss is not the
// program's own: a process started by a Go program (as gocoll run starts
// the ranks) keeps its parent's peak from before the exec, since the two
// share their memory until then (vfork), so a small rank reads as large as
// its launcher.
func peakMiB() float64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if mib, ok := vmHWM(string(b)); ok {
			return mib
		}
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return maxrssMiB(int64(ru.Maxrss))
}

// vmHWM returns, in MiB, the "VmHWM: N kB" line of a /proc/PID/status
// text, and whether there is one.
func vmHWM(status string) (float64, bool) {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}

// maxrssMiB converts a ru_maxrss figure, counted in maxrssUnit bytes, to
// MiB.
func maxrssMiB(maxrss int64) float64 { return float64(maxrss) * maxrssUnit / (1 << 20) }
