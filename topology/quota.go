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
		v2 := id == "0" && controllers == ""
		var dirs []string // where this hierarchy's files are mounted
		switch {
		case v2:
			dirs = []string{"", "unified"} // "unified": v2 beside v1 (hybrid)
		case hasController(controllers, "cpu"):
			dirs = []string{controllers, "cpu", "cpu,cpuacct"}
		default:
			continue
		}
		for dir := cg; ; dir = path.Dir(dir) {
			for _, mount := range dirs {
				base := strings.TrimPrefix(path.Join(mount, dir), "/") // relative to the mounts
				q, p, found := quotaAt(read, base, v2)
				if found {
					take(q, p)
				}
				if found && !v2 {
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

// quotaAt reads the CPU quota and period of the cgroup directory base:
// cgroup v2's cpu.max if v2, else v1's cpu.cfs_quota_us and
// cpu.cfs_period_us. found says whether its files are there (v1: both; a
// v2 cpu.max of "max" or one that does not parse counts as absent); a
// quota of -1 (v1: none) is returned as it is, for take to ignore.
func quotaAt(read func(path string) (string, bool), base string, v2 bool) (quota, period float64, found bool) {
	var qs, ps string
	if v2 {
		s, ok := read(path.Join(base, "cpu.max"))
		f := strings.Fields(s)
		if !ok || len(f) != 2 || f[0] == "max" {
			return 0, 0, false
		}
		qs, ps = f[0], f[1]
	} else {
		var ok1, ok2 bool
		qs, ok1 = read(path.Join(base, "cpu.cfs_quota_us"))
		ps, ok2 = read(path.Join(base, "cpu.cfs_period_us"))
		if !ok1 || !ok2 {
			return 0, 0, false
		}
	}
	q, err1 := strconv.ParseFloat(strings.TrimSpace(qs), 64)
	p, err2 := strconv.ParseFloat(strings.TrimSpace(ps), 64)
	if err1 != nil || err2 != nil {
		return 0, 0, !v2 // v1's files were there: its hierarchy is read
	}
	return q, p, true
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
// limit in whole CPUs (quotaCPUs) is fewer, that many cores and no list
// (the list no longer says how many the process gets); else both as they
// are.
func limitCores(cpus string, cores int, limit float64) (string, int) {
	if n := quotaCPUs(limit); n > 0 && (n < cores || cores == 0) {
		return "", n
	}
	return cpus, cores
}

// maxQuotaCPUs is the largest CPU limit quotaCPUs counts; one above it
// (a quota far over its period) is no limit.
const maxQuotaCPUs = 1 << 20

// quotaCPUs is a cgroup CPU limit (cgroupCPULimit: 0 none) in whole CPUs:
// rounded up (1.5 CPUs of time keep 2 CPUs busy), at least 1; 0 for no
// limit, or for one above maxQuotaCPUs.
func quotaCPUs(limit float64) int {
	if !(limit > 0) || limit > maxQuotaCPUs {
		return 0
	}
	return max(1, int(math.Ceil(limit-1e-9)))
}
