//go:build linux

package shm

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGetcpuBound checks that getcpu, from RDTSCP where tscAuxOK, tells
// the processor a thread is bound to, on each processor it may use.
func TestGetcpuBound(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		t.Skip(err)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &mask) }()
	t.Logf("tscAuxOK %v", tscAuxOK)
	for _, cpu := range cpuList(&mask) {
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Fatal(err)
		}
		if got, ok := getcpu(); !ok || got != cpu {
			t.Errorf("bound to processor %d: getcpu says %d, %v", cpu, got, ok)
		}
	}
}

// TestCheckTSCAux checks the start-up check: agreement, disagreement, a
// thread moving between the reads, and a failing system call.
func TestCheckTSCAux(t *testing.T) {
	seq := func(v ...int) func() int {
		i := 0
		return func() int { i++; return v[(i-1)%len(v)] }
	}
	sys := func(cpu int, ok bool) func() (int, bool) { return func() (int, bool) { return cpu, ok } }
	for _, c := range []struct {
		name string
		aux  func() int
		sys  func() (int, bool)
		want bool
	}{
		{"agree", seq(3), sys(3, true), true},
		{"differ", seq(3), sys(0, true), false},
		{"always moving", seq(1, 2), sys(1, true), false},
		{"moved once", seq(1, 2, 2, 2), sys(2, true), true},
		{"no system call", seq(3), sys(3, false), false},
	} {
		if got := checkTSCAux(c.aux, c.sys); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
