//go:build unix

package main

import (
	"os"
	"runtime"
	"testing"
)

// ru_maxrss is bytes on macOS and KiB elsewhere: 3 MiB reads as 3 either way.
func TestMaxrssMiB(t *testing.T) {
	threeMiB := int64(3 << 10) // KiB
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		threeMiB = 3 << 20 // bytes
	}
	if got := maxrssMiB(threeMiB); got != 3 {
		t.Fatalf("maxrssMiB(%d) on %s = %v MiB, want 3", threeMiB, runtime.GOOS, got)
	}
}

func TestVmHWM(t *testing.T) {
	for text, want := range map[string]float64{
		"Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n": 2,
		"VmHWM:\t1536 kB": 1.5,
	} {
		if got, ok := vmHWM(text); !ok || got != want {
			t.Errorf("vmHWM(%q) = %v, %v; want %v", text, got, ok, want)
		}
	}
	for _, text := range []string{"", "VmRSS:\t1 kB\n", "VmHWM:\tmany kB\n"} {
		if got, ok := vmHWM(text); ok {
			t.Errorf("vmHWM(%q) = %v, true; want false", text, got)
		}
	}
}

// On Linux peakMiB is this process's own peak, the kernel's VmHWM, not
// ru_maxrss, which here holds the peak of go test's process before the
// exec (many times this test's own).
func TestPeakMiBIsThisProcesss(t *testing.T) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	hwm, ok := vmHWM(string(b))
	if !ok {
		t.Skip("no VmHWM in /proc/self/status")
	}
	// The peak may grow between the two reads, not by a factor of 2.
	if peak := peakMiB(); peak < hwm || peak > 2*hwm {
		t.Fatalf("peakMiB %v MiB, VmHWM %v MiB", peak, hwm)
	}
}
