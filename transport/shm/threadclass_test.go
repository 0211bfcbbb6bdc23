//go:build linux

package shm_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOversubscribedConnectKeepsThreadClasses: a Connect where the ranks
// are processes that outnumber their processors (both pinned to one CPU
// here) puts no thread of the process in the idle scheduling class, not
// even after the Go runtime starts threads. A thread inherits its
// creator's class, and the runtime's monitor thread starts threads itself
// (it hands the processor of a thread blocked in a system call to a new
// one): with the monitor in the idle class (as Connect did in session 18)
// such threads run the rank's goroutines, which on a host whose cores are
// busy then wait for an idle core. The count of idle-class threads must
// be 0.
func TestOversubscribedConnectKeepsThreadClasses(t *testing.T) {
	// This goroutine's thread, pinned, starts the child (which inherits
	// the mask) and Connects; it is never unlocked, so it ends with the
	// test.
	runtime.LockOSThread()
	var one unix.CPUSet
	one.Set(0)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Skipf("cannot pin a thread: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	child := startChild(ctx, t, childHold)
	_ = connectParent(ctx, t, child)

	// Goroutines block in nanosleep (a system call that keeps its
	// processor until the monitor takes it) while others stay runnable.
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(2)
		go func() {
			defer wg.Done()
			ts := unix.NsecToTimespec(int64(20 * time.Millisecond))
			for range 5 {
				_ = unix.Nanosleep(&ts, nil)
			}
		}()
		go func() {
			defer wg.Done()
			for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	}
	wg.Wait()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	idle := 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // ended meanwhile
		}
		if a.Policy == 5 { // SCHED_IDLE
			idle++
		}
	}
	if idle > 0 {
		t.Errorf("%d of %d threads in the idle scheduling class after an oversubscribed Connect, want 0", idle, len(ents))
	}
}
