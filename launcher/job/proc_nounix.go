//go:build !unix

package job

import (
	"errors"
	"os/exec"
	"syscall"
)

// A launcher starts each rank in a process group of its own and signals
// that group to forward a signal or stop the job; a system without process
// groups (Windows) can do neither, so there every job is refused before
// anything starts, and the functions below that its Unix counterparts
// (proc_unix.go, proc_linux.go) define are never reached.

// errStartUnsupported is the error of every job on such a system.
var errStartUnsupported = errors.New("starting ranks is supported on Linux and macOS only")

// startSupported refuses the job (plan calls it before anything starts).
func startSupported() error { return errStartUnsupported }

// sigDiagnose is no signal this system delivers (there is no SIGUSR1):
// only --diagnose or a stall ask for a diagnosis.
const sigDiagnose syscall.Signal = -1

// checkFiles has no RLIMIT_NOFILE to check np ranks' files against.
func checkFiles(np int) error { return nil }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func startBound(*exec.Cmd, []int) error { return errStartUnsupported }

func awaitExit(cmd *exec.Cmd) (reaped bool) {
	_ = cmd.Wait() // the status is in ProcessState whatever the error
	return true
}

func processStopped(int) bool { return false }

func signalGroup(int, syscall.Signal) error { return errStartUnsupported }
