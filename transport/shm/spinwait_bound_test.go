//go:build linux

package shm

import (
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// Ranks of a host bound a core each (gocoll run --bind-to core) are not
// oversubscribed though each alone sees one processor (review A16, L3):
// Connect counts the processors any local rank can run on (the union of
// their affinity masks), not runtime.NumCPU(), this process's mask at
// start. This rank is the test's thread, bound to CPU 0; its one peer a
// child process, bound to CPU 1 (2 ranks, 2 processors: DefaultSpinWait),
// then to CPU 0 too (2 ranks on 1: OversubscribedSpinWait).
func TestSpinWaitOfRanksBoundACoreEach(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("no child process: %v", err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	bind := func(pid, cpu int) error {
		var set unix.CPUSet
		set.Set(cpu)
		return unix.SchedSetaffinity(pid, &set)
	}
	runtime.LockOSThread() // never unlocked: the bound thread ends with the test
	if err := bind(0, 0); err != nil {
		t.Skipf("cannot bind this thread to CPU 0: %v", err)
	}
	if err := bind(child.Process.Pid, 1); err != nil {
		t.Skipf("cannot bind a process to CPU 1 (a host of one CPU?): %v", err)
	}
	e := &Endpoint{rank: 0, peers: []*peer{nil, {pid: child.Process.Pid}}}
	if n := e.localCPUs(false); n != 2 {
		t.Fatalf("this rank on CPU 0, its peer on CPU 1: %d processors, want 2", n)
	}
	if got := defaultSpinWait(2, false, e.localCPUs(false)); got != DefaultSpinWait {
		t.Fatalf("2 ranks bound to a core each: SpinWait %v, want %v (no more ranks than processors)", got, DefaultSpinWait)
	}
	if err := bind(child.Process.Pid, 0); err != nil {
		t.Fatal(err)
	}
	if got := defaultSpinWait(2, false, e.localCPUs(false)); got != OversubscribedSpinWait {
		t.Fatalf("2 ranks bound to CPU 0: SpinWait %v, want %v", got, OversubscribedSpinWait)
	}
}
