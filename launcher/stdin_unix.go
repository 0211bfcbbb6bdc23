//go:build unix

package launcher

import (
	"os"
	"syscall"
)

// terminateSelf sends this process SIGTERM and reports true: the program
// has stdinExitGrace to end.
func terminateSelf() bool {
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	return true
}
