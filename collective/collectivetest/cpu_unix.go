//go:build unix

package collectivetest

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user and system CPU time so far (0 if the
// system will not say).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
