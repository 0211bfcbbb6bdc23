package topology

import (
	"math"
	"path"
	"strconv"
	"strings"
)

// cgroupCPULimit returns the CPU time limit, in CPUs (quota over period:
// 1.5 for 150 ms a 100 ms period), that the cgroups of a process set,
// from its /proc/self/cgroup (procCgroup) and the files read returns
// (a path relative to /sys/fs/cgroup, its content, false where absent): cgroup
// v2's cpu.max ("max 100000": none; "150000 100000") and v1's
// cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us, of the process's
// cgroup and every cgroup above it (each caps what is below: the least
// stands), for v1 under the mount of the hierarchy the cpu controller is
// in ("cpu,cpuacct" or "cpu"). 0: no limit found. A container whose
// cgroup namespace shows its own cgroup as "/" reads the limit at the
// mount's top. A pure function: detect.go gives it the machine's files.
func cgroupCPULimit(procCgroup string, read func(path string) (string, bool)) float64 {
	limit := math.Inf(1)
	take := func(quota, period float64) {
		if quota > 0 && period > 0 {
			limit = min(limit, quota/period)
		}
	}
	for line := range strings.SplitSeq(procCgroup, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		id, controllers, cg := parts[0], parts[1], path.Clean(parts[2])
		var dirs []string // where this hierarchy's files are, for v1
		switch {
		case id == "0" && controllers == "":
			dirs = []string{"", "unified"} // "unified": v2 beside v1 (hybrid)
		case hasController(controllers, "cpu"):
			dirs = []string{controllers, "cpu", "cpu,cpuacct"}
		default:
			continue
		}
		for dir := cg; ; dir = path.Dir(dir) {
			for _, mount := range dirs {
				// relative to the mounts
				base := strings.TrimPrefix(path.Join(mount, dir), "/")
				if id == "0" && controllers == "" {
					if s, ok := read(path.Join(base, "cpu.max")); ok {
						f := strings.Fields(s)
						if len(f) == 2 && f[0] != "max" {
							q, err1 := strconv.ParseFloat(f[0], 64)
							p, err2 := strconv.ParseFloat(f[1], 64)
							if err1 == nil && err2 == nil {
								take(q, p)
							}
						}
					}
					continue
				}
				qs, ok1 := read(path.Join(base, "cpu.cfs_quota_us"))
				ps, ok2 := read(path.Join(base, "cpu.cfs_period_us"))
				if ok1 && ok2 {
					q, err1 := strconv.ParseFloat(strings.TrimSpace(qs), 64)
					p, err2 := strconv.ParseFloat(strings.TrimSpace(ps), 64)
					if err1 == nil && err2 == nil {
						take(q, p)
					}
					break // one mount of this hierarchy is enough
				}
			}
			if dir == "/" {
				break
			}
		}
	}
	if math.IsInf(limit, 1) {
		return 0
	}
	return limit
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// limitCores applies a cgroup CPU limit (cgroupCPULimit: 0 none) to the
// CPUs a process may run on (cpus, a cpu list, of cores CPUs): where the
// limit, rounded up to whole CPUs, is fewer, that many cores and no list
// (the list no longer says how many the process gets); else both as they
// are.
func limitCores(cpus string, cores int, limit float64) (string, int) {
	if limit <= 0 {
		return cpus, cores
	}
	if n := int(math.Ceil(limit - 1e-9)); n < cores || cores == 0 {
		return "", max(1, n)
	}
	return cpus, cores
}
