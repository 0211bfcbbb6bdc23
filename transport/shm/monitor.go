//go:build linux

package shm

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime's monitor thread (sysmon) on an oversubscribed host. It
// sleeps 20 us between its rounds for its first 50 rounds after the
// process was idle (every processor of the runtime idle, then a system
// call), and only then doubles its sleep up to 10 ms. On the virtual
// machines this was measured on, each such sleep lasts about 90 us (the
// thread's 50 us timer slack), and the kernel wakes the monitors of all
// the host's rank processes together (the slack lets it expire their
// timers at once): with 4 ranks on 2 cores, every ~90 us for the first
// ~4.5 ms of a loop of 8-byte AllReduces that follows a pause, three
// monitors took one core from its two ranks for 20-40 us at a time, each
// preempting a rank that every other rank then waited for. That is much
// of why a 1000-call loop after 50 warm-up calls took 5.3 us a call in a
// quiet window against 2.6 for a 100000-call one (bench/results/
// small_ops.md, Session 18, ar18).
//
// So where this host's ranks are processes that outnumber its processors
// (the balancer's case, Config.NoBalance), Connect puts the monitor
// thread in the idle scheduling class (SCHED_IDLE): a monitor woken then
// does not preempt a running rank, and runs where a core has nothing
// else to run. Its work (taking a processor from a thread blocked in a
// system call, preempting a goroutine that ran 10 ms, the forced GC)
// waits for such a moment, on a host whose cores the spinning ranks keep
// busy anyway; a rank's waits there poll in its own goroutine, and once
// the ranks idle the monitor runs at once. Niceness 19 was tried first:
// it halved the monitors' runs in such a loop where the idle class cut
// them by five (bench/results/small_ops.md, Session 18, ar18).
//
// The monitor is the first thread the runtime starts (runtime.main): the
// process's thread of the lowest id above its own, checked to be blocked
// in nanosleep (the runtime's usleep, which the monitor sleeps in between
// its rounds) at two looks in a row, a few tens of microseconds apart.
const (
	schedIdle     = 5  // SCHED_IDLE (linux/sched.h)
	monitorLooks  = 40 // looks before it gives up
	monitorLookAt = 50 * time.Microsecond
)

var (
	monitorOnce sync.Once
	monitorTID  int
)

// calmMonitor puts this process's runtime monitor thread in the idle
// scheduling class, once per process; it reports the thread (the same at
// every call), or 0 if it found none or may not change it.
func calmMonitor() int {
	monitorOnce.Do(func() {
		if t := findMonitor(); t > 0 && unix.SchedSetAttr(t, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedIdle}, 0) == nil {
			monitorTID = t
		}
	})
	return monitorTID
}

// findMonitor returns the runtime's monitor thread of this process: the
// first thread it started after the main one, if that thread is blocked
// in nanosleep at two looks in a row; else 0. It looks the thread up
// as /proc/TID, never under /proc/self/task: a dentry made there is
// flushed, when the process exits, by whoever reaps it, which then waits
// for every thread's exit, and a reaper of high priority spun seconds in
// the kernel waiting for a monitor of low priority to run (a dentry under
// /proc/TID is flushed by the thread itself).
func findMonitor() int {
	tid := firstThread(os.Getpid(), monitorScan)
	if tid <= 0 {
		return 0
	}
	last := false
	for range monitorLooks {
		now := blockedIn(tid, unix.SYS_NANOSLEEP)
		if now && last {
			return tid
		}
		last = now
		time.Sleep(monitorLookAt)
	}
	return 0
}

// monitorScan bounds how many thread ids past the process's own
// firstThread tries.
const monitorScan = 4096

// firstThread is the lowest thread id above pid, at most pid+scan, of a
// thread of process pid (/proc/TID/status's Tgid), or 0: thread ids rise
// as threads start (until they wrap at the system's pid_max, where it
// finds none, or a later one).
func firstThread(pid, scan int) int {
	var buf [512]byte
	for tid := pid + 1; tid <= pid+scan; tid++ {
		n := readProc("/proc/"+strconv.Itoa(tid)+"/status", buf[:])
		if n <= 0 {
			continue
		}
		s := string(buf[:n])
		if i := strings.Index(s, "\nTgid:"); i >= 0 {
			f := strings.Fields(s[i+len("\nTgid:"):])
			if len(f) > 0 && f[0] == strconv.Itoa(pid) {
				return tid
			}
		}
	}
	return 0
}

// blockedIn reports whether thread tid is blocked in system call nr
// (/proc/TID/syscall).
func blockedIn(tid int, nr uintptr) bool {
	var buf [128]byte
	n := readProc("/proc/"+strconv.Itoa(tid)+"/syscall", buf[:])
	f := strings.Fields(string(buf[:max(n, 0)]))
	return len(f) > 0 && f[0] == strconv.FormatUint(uint64(nr), 10)
}

// readProc reads the start of file path into buf, returning how many
// bytes it read, or -1.
func readProc(path string, buf []byte) int {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return -1
	}
	return n
}
