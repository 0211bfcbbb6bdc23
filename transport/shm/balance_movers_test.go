//go:build linux

package shm

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Two ranks that see the same crowd move the same thread at once (the
// balancer's choice is the same on every rank by design). A mover that
// read the other's one-processor mask, held for a moment, and "restored"
// it would leave the thread bound for good: moveThread must leave the
// thread's mask as it was, however the two interleave. The moved thread
// is a locked goroutine's; the check is of the mask after each round.
func TestMoveThreadConcurrentMovers(t *testing.T) {
	var full unix.CPUSet
	if err := unix.SchedGetaffinity(0, &full); err != nil || full.Count() < 2 {
		t.Skip("needs 2 processors")
	}
	cpus := cpuList(&full)
	tidc, stop := make(chan int), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		tidc <- unix.Gettid()
		<-stop
	}()
	tid := <-tidc
	defer close(stop)
	pid := os.Getpid()
	rounds := 5
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 10000 {
					moveThread(pid, tid, cpus[1])
				}
			})
		}
		wg.Wait()
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &got); err != nil {
			t.Fatal(err)
		}
		if got != full {
			t.Fatalf("round %d: after two movers the thread's mask holds %d processors, was %d: it stays bound", round, got.Count(), full.Count())
		}
	}
}
