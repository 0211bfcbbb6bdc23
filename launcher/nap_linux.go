//go:build linux

package launcher

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawNapWorks reports whether rawNap sleeps without the runtime seeing a
// system call.
const rawNapWorks = true

// rawNap sleeps for d, or until a signal comes, in a raw nanosleep: the
// runtime is not told (no entersyscall), so the goroutine keeps its P and
// the monitor thread neither takes the P nor is woken (holdMonitor).
func rawNap(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
