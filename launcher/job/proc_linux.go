package job

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a rank's process in a process group of its own and has
// the kernel kill it if the launcher dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// awaitExit blocks until cmd's process has exited and leaves it unreaped
// (waitid with WNOWAIT), so its pid cannot be reused yet; it returns false:
// the caller reaps it with cmd.Wait.
func awaitExit(cmd *exec.Cmd) (reaped bool) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}

// processStopped reports whether process pid is stopped (SIGSTOP,
// SIGTSTP) or traced: state T or t in /proc/pid/stat.
func processStopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'T' || b[i+2] == 't'
}
