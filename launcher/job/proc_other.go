//go:build unix && !linux

package job

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts a rank's process in a process group of its own. Without
// Linux's Pdeathsig, a rank outlives a launcher that is killed; a launcher
// that ends normally stops its ranks first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// awaitExit reaps cmd's process with cmd.Wait once it has exited and
// returns true. Without waitid's WNOWAIT, a signal sent between this
// reaping and the caller recording it could reach a process that reused
// the pid; the window is the few instructions in between.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	_ = cmd.Wait() // the status is in ProcessState whatever the error
	return true
}

// processStopped is false where /proc does not say (see proc_linux.go).
func processStopped(int) bool { return false }
