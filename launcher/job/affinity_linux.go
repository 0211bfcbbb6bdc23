package job

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxCPUs is the most CPUs unix.CPUSet holds.
const maxCPUs = 1024

// hostCores lists the cores the launcher may run on (its affinity mask),
// each as its CPU numbers (hardware threads), ordered by their first CPU.
// CPUs whose core sysfs does not tell are a core each.
func hostCores() [][]int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cores [][]int
	index := map[string]int{} // "package/core" -> index in cores
	for cpu := 0; cpu < maxCPUs; cpu++ {
		if !set.IsSet(cpu) {
			continue
		}
		key := coreKey(cpu)
		if i, ok := index[key]; ok && key != "" {
			cores[i] = append(cores[i], cpu)
			continue
		}
		index[key] = len(cores)
		cores = append(cores, []int{cpu})
	}
	return cores
}

// coreKey names cpu's core as sysfs does ("package/core"), "" if it
// cannot tell.
func coreKey(cpu int) string {
	dir := "/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/topology/"
	pkg, err1 := os.ReadFile(dir + "physical_package_id")
	core, err2 := os.ReadFile(dir + "core_id")
	if err1 != nil || err2 != nil {
		return ""
	}
	return strings.TrimSpace(string(pkg)) + "/" + strings.TrimSpace(string(core))
}

// startBound starts cmd with its CPU affinity set to cpus (none: as the
// launcher's). The mask is set on the thread that forks, for the time of
// the fork, so that the child and every thread it makes inherit it from
// their first instruction on; the thread then gets its own mask back. (It
// must live on: Pdeathsig fires when the forking thread ends.)
func startBound(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	var set, old unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("--bind-to: %v", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("--bind-to: CPUs %v: %v", cpus, err)
	}
	err := cmd.Start()
	// Restoring a mask this thread had cannot fail in practice; if it did,
	// one launcher thread would run on fewer CPUs, which is harmless.
	_ = unix.SchedSetaffinity(0, &old)
	return err
}
