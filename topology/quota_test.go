package topology

import (
	"math"
	"testing"
)

// cgroupCPULimit reads cgroup v2's cpu.max and v1's CFS quota over its
// period, of the process's cgroup and those above it, the least standing;
// "max" and -1 are no limit, nor is a missing file.
func TestCgroupCPULimit(t *testing.T) {
	for _, tc := range []struct {
		name, self string
		files      map[string]string
		want       float64
	}{
		{"v2, a container at its root", "0::/\n", map[string]string{"cpu.max": "250000 100000\n"}, 2.5},
		{"v2, no limit", "0::/\n", map[string]string{"cpu.max": "max 100000\n"}, 0},
		{"v2, the parent's is less", "0::/job/rank3\n", map[string]string{
			"job/rank3/cpu.max": "400000 100000", "job/cpu.max": "150000 100000", "cpu.max": "max 100000"}, 1.5},
		{"v2, no files", "0::/a/b\n", nil, 0},
		{"v2 beside v1", "1:cpu:/\n0::/\n", map[string]string{"unified/cpu.max": "300000 100000", "cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, 3},
		{"v1 cpu,cpuacct", "12:pids:/x\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n", map[string]string{
			"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "200000\n", "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
			"cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 2},
		{"v1 mounted as cpu, seen from inside", "4:cpuacct,cpu:/docker/abc\n", map[string]string{
			"cpu/cpu.cfs_quota_us": "50000", "cpu/cpu.cfs_period_us": "100000"}, 0.5},
		{"v1 without a quota", "4:cpu,cpuacct:/\n", map[string]string{
			"cpu,cpuacct/cpu.cfs_quota_us": "-1", "cpu,cpuacct/cpu.cfs_period_us": "100000"}, 0},
		{"garbage", "not a cgroup line\n0::relative\n", map[string]string{"cpu.max": "x y"}, 0},
	} {
		read := func(p string) (string, bool) { s, ok := tc.files[p]; return s, ok }
		if got := cgroupCPULimit(tc.self, read); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v CPUs, want %v", tc.name, got, tc.want)
		}
	}
}

// A limit under the mask's CPUs makes the cores that many, rounded up,
// and drops the list; a limit at or above them, or none, leaves both.
func TestLimitCores(t *testing.T) {
	for _, tc := range []struct {
		cpus      string
		cores     int
		limit     float64
		wantCPUs  string
		wantCores int
	}{
		{"0-63", 64, 2.5, "", 3},
		{"0-63", 64, 2, "", 2},
		{"0-63", 64, 0.2, "", 1},
		{"0-1", 2, 4, "0-1", 2},
		{"0-1", 2, 2, "0-1", 2},
		{"0-3", 4, 0, "0-3", 4},
		{"", 0, 3, "", 3},
	} {
		if cpus, cores := limitCores(tc.cpus, tc.cores, tc.limit); cpus != tc.wantCPUs || cores != tc.wantCores {
			t.Errorf("limitCores(%q, %d, %v) = %q, %d; want %q, %d", tc.cpus, tc.cores, tc.limit, cpus, cores, tc.wantCPUs, tc.wantCores)
		}
	}
}
