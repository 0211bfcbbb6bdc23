package job

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/gocoll/gocoll/internal/affinity"
	"golang.org/x/sys/unix"
)

// startBound starts cmd with its CPU affinity set to cpus (none: as the
// launcher's). The mask is set on the thread that forks, for the time of
// the fork, so that the child and every thread it makes inherit it from
// their first instruction on; the thread then gets its own mask back. (It
// must live on: Pdeathsig fires when the forking thread ends.)
func startBound(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	set, err := affinity.Set(cpus)
	if err != nil {
		return fmt.Errorf("--bind-to: %v", err)
	}
	var old unix.CPUSet
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("--bind-to: %v", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("--bind-to: CPUs %v: %v", cpus, err)
	}
	err = cmd.Start()
	// Restoring a mask this thread had cannot fail in practice; if it did,
	// one launcher thread would run on fewer CPUs, which is harmless.
	_ = unix.SchedSetaffinity(0, &old)
	return err
}
