package affinity

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxBindPasses bounds Bind's passes over the process's threads; each
// pass after the first only finds threads made during the one before.
const maxBindPasses = 16

// Cores lists the cores this process may run on (its affinity mask), each
// as its CPU numbers (hardware threads), ordered by their first CPU. CPUs
// whose core sysfs does not tell are a core each. nil if the mask cannot
// be read.
func Cores() [][]int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cores [][]int
	index := map[string]int{} // "package/core" -> index in cores
	for cpu := 0; cpu < MaxCPUs; cpu++ {
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

// Set returns cpus as a mask; a CPU outside [0, MaxCPUs) is an error.
func Set(cpus []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= MaxCPUs {
			return set, fmt.Errorf("CPU %d: want 0 to %d", c, MaxCPUs-1)
		}
		set.Set(c)
	}
	if len(cpus) == 0 {
		return set, errors.New("no CPU to bind to")
	}
	return set, nil
}

// Bind binds every thread of this process to cpus, as if it had started
// bound: each thread listed in /proc/self/task, pass after pass until a
// pass finds none it has not bound (a thread made by a bound one inherits
// its mask; one made by a thread not yet bound shows in the next pass).
// It fails, naming the CPUs, if a thread cannot be bound or threads keep
// appearing for maxBindPasses passes.
func Bind(cpus []int) error {
	set, err := Set(cpus)
	if err != nil {
		return err
	}
	bound := map[int]bool{}
	for range maxBindPasses {
		tids, err := threads()
		if err != nil {
			return fmt.Errorf("binding to CPUs %s: %v", Format(cpus), err)
		}
		fresh := false
		for _, tid := range tids {
			if bound[tid] {
				continue
			}
			fresh = true
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread ended
				}
				return fmt.Errorf("binding thread %d to CPUs %s: %v", tid, Format(cpus), err)
			}
			bound[tid] = true
		}
		if !fresh {
			return nil
		}
	}
	return fmt.Errorf("binding to CPUs %s: threads kept appearing for %d passes", Format(cpus), maxBindPasses)
}

// threads lists this process's thread ids, sorted.
func threads() ([]int, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// Threads returns, by thread id, the CPUs each thread of this process may
// run on (sched_getaffinity), for checks and tests.
func Threads() (map[int][]int, error) {
	tids, err := threads()
	if err != nil {
		return nil, err
	}
	out := map[int][]int{}
	for _, tid := range tids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			return nil, err
		}
		var cpus []int
		for c := 0; c < MaxCPUs; c++ {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
		out[tid] = cpus
	}
	return out, nil
}

// Union counts the CPUs that any of the processes pids (0: this one) may
// run on: the union of their affinity masks (sched_getaffinity, which
// needs no privilege). Ranks of one host bound a core each (Pick) count
// as many CPUs as ranks, where each alone sees one.
func Union(pids []int) (int, error) {
	var all unix.CPUSet
	for _, pid := range pids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			return 0, fmt.Errorf("sched_getaffinity of process %d: %w", pid, err)
		}
		for i := range all {
			all[i] |= set[i]
		}
	}
	return all.Count(), nil
}
