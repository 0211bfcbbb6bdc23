//go:build unix

package probe

import (
	"syscall"
	"time"
)

// processCPU returns the process's user and system CPU time so far, and
// false if the system will not say.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
