//go:build linux

package shm

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFindMonitor finds the runtime's monitor thread of the test process:
// a thread other than the caller's, blocked in nanosleep at two looks in
// a row, the one the runtime created first after the main thread (the
// monitor is the first it starts, in runtime.main).
func TestFindMonitor(t *testing.T) {
	tid := findMonitor()
	if tid <= 0 {
		t.Fatal("no thread of this process found sleeping in nanosleep")
	}
	if tid == unix.Gettid() {
		t.Fatalf("found the calling thread %d", tid)
	}
	if first := firstStarted(t); tid != first {
		t.Errorf("found thread %d; the first thread started after the main one is %d", tid, first)
	}
}

// TestCalmMonitor: on an oversubscribed host, Connect's calmMonitor puts
// the monitor thread in the idle scheduling class, and no other thread of
// the process changes; it does so once per process, and reports the same
// thread at every call (so the test holds at -count=2 too).
func TestCalmMonitor(t *testing.T) {
	before := policies(t)
	tid := calmMonitor()
	if tid <= 0 {
		t.Fatal("calmMonitor found no monitor thread")
	}
	after := policies(t)
	if after[tid] != schedIdle {
		t.Errorf("monitor thread %d: scheduling policy %d, want SCHED_IDLE (%d)", tid, after[tid], schedIdle)
	}
	for th, n := range after {
		if b, ok := before[th]; ok && th != tid && b != n {
			t.Errorf("thread %d: scheduling policy %d, was %d", th, n, b)
		}
	}
	if again := calmMonitor(); again != tid {
		t.Errorf("a second calmMonitor reported thread %d, the first %d", again, tid)
	}
}

// policies is every thread of this process, with its scheduling policy.
func policies(t *testing.T) map[int]int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]int{}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // ended meanwhile
		}
		m[tid] = int(a.Policy)
	}
	return m
}

// firstStarted is the thread of this process started first after the
// main one (start time, then thread id; /proc/self/task/TID/stat).
func firstStarted(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	best, bestStart := 0, uint64(0)
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if tid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		start, _ := strconv.ParseUint(f[19], 10, 64) // field 22 of stat
		if best == 0 || start < bestStart || start == bestStart && tid < best {
			best, bestStart = tid, start
		}
	}
	return best
}
