//go:build linux

package collective

import (
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Futex operations, shared (not FUTEX_PRIVATE_FLAG): the boards are
// mapped by every rank's process.
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while the low 32 bits of w hold val, until futexWake
// on w, d has passed or a signal comes, whichever is first. The runtime
// knows of the sleep (not a raw system call): where ranks are goroutines
// of one process, its monitor hands this P to the ranks that have work.
func futexWait(w *atomic.Uint64, val uint32, d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_, _, _ = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes every thread sleeping in futexWait on w, in any process.
func futexWake(w *atomic.Uint64) {
	_, _, _ = syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<31-1, 0, 0, 0)
}
