package spinwait

import "golang.org/x/sys/unix"

// yieldCPU gives the CPU to another thread or process, if one waits. It
// is a raw system call: it never blocks, and the runtime's bookkeeping for
// a blocking one would wake its monitor thread.
func yieldCPU() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
