package launcher

import "github.com/gocoll/gocoll/topology"

// usableProcessors is how many processors a process may keep busy at once:
// the cpus of its affinity mask, or fewer where its cgroup CPU quota,
// in whole CPUs (topology.CPUQuota: 0 none), allows fewer. A quota of 2
// CPUs' time over a mask of 64 lets no more than 2 of the 64 run at a
// time, so a monitor thread's wake-up takes one of those 2 from a rank.
func usableProcessors(cpus, quota int) int {
	if quota > 0 && quota < cpus {
		return quota
	}
	return cpus
}

// cpuQuota is the processors this process's cgroup CPU quota allows, in
// whole CPUs (topology.CPUQuota: 0 none); a variable for a test to read a
// fake cgroup tree (topology.CPUQuotaAt) instead of the machine's.
var cpuQuota = topology.CPUQuota
