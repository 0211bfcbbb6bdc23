package topology

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
		{"0-3", 4, 1e300, "0-3", 4}, // a quota far over its period: no limit (it once made the cores 1)
	} {
		if cpus, cores := limitCores(tc.cpus, tc.cores, tc.limit); cpus != tc.wantCPUs || cores != tc.wantCores {
			t.Errorf("limitCores(%q, %d, %v) = %q, %d; want %q, %d", tc.cpus, tc.cores, tc.limit, cpus, cores, tc.wantCPUs, tc.wantCores)
		}
	}
}

// quotaCPUs rounds a limit up to whole CPUs, at least 1; none (0, or not
// a number) and one too large to count are 0.
func TestQuotaCPUs(t *testing.T) {
	for _, tc := range []struct {
		limit float64
		want  int
	}{
		{0, 0}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}, {1e300, 0}, {maxQuotaCPUs + 1, 0},
		{0.01, 1}, {0.5, 1}, {1, 1}, {1.0000000001, 1}, {1.5, 2}, {2, 2}, {2.5, 3}, {maxQuotaCPUs, maxQuotaCPUs},
	} {
		require.Equal(t, tc.want, quotaCPUs(tc.limit), "%v", tc.limit)
	}
}

// CPUQuotaAt reads a fake cgroup tree: the process's cgroup list and the
// files under a root of the test's own, not the machine's.
func TestCPUQuotaAt(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	self := filepath.Join(root, "self-cgroup")
	write("self-cgroup", "0::/job/rank1\n")
	write("sys/cpu.max", "max 100000\n")
	write("sys/job/cpu.max", "150000 100000\n")
	write("sys/job/rank1/cpu.max", "max 100000\n")
	require.Equal(t, 2, CPUQuotaAt(self, filepath.Join(root, "sys")), "1.5 CPUs of time above the rank's cgroup")

	write("sys/job/cpu.max", "max 100000\n")
	require.Equal(t, 0, CPUQuotaAt(self, filepath.Join(root, "sys")), "no quota")

	write("sys/job/rank1/cpu.max", "50000 100000\n")
	require.Equal(t, 1, CPUQuotaAt(self, filepath.Join(root, "sys")), "half a CPU")

	write("v1-cgroup", "3:cpu,cpuacct:/docker/c1\n0::/\n")
	write("sys/cpu,cpuacct/docker/c1/cpu.cfs_quota_us", "300000\n")
	write("sys/cpu,cpuacct/docker/c1/cpu.cfs_period_us", "100000\n")
	require.Equal(t, 3, CPUQuotaAt(filepath.Join(root, "v1-cgroup"), filepath.Join(root, "sys")), "v1's quota over its period")

	require.Equal(t, 0, CPUQuotaAt(filepath.Join(root, "absent"), filepath.Join(root, "sys")), "no cgroup list")
	require.Equal(t, 0, CPUQuotaAt(self, filepath.Join(root, "absent")), "no cgroup files")
}

// FuzzCgroupCPULimit: whatever the cgroup list and files say, the limit is
// a number of CPUs or 0 (never negative, NaN nor infinite, never a panic),
// and quotaCPUs makes it whole CPUs no fewer than it, nor one more.
func FuzzCgroupCPULimit(f *testing.F) {
	f.Add("0::/\n", "150000 100000", "")
	f.Add("0::/a/b\n", "max 100000\n", "")
	f.Add("4:cpu,cpuacct:/docker/abc\n", "200000\n", "100000\n")
	f.Add("1:cpu:/\n0::/\n", "-1", "100000")
	f.Add("0::/\n", "1e300 1", "")
	f.Add("0::/\n", "NaN 1", "")
	f.Add("2:cpuacct,cpu:/../x\n", "0x1p3", "1e-300")
	f.Fuzz(func(t *testing.T, self, quota, period string) {
		read := func(p string) (string, bool) {
			switch {
			case strings.HasSuffix(p, "cpu.max"), strings.HasSuffix(p, "cpu.cfs_quota_us"):
				return quota, true
			case strings.HasSuffix(p, "cpu.cfs_period_us"):
				return period, true
			}
			return "", false
		}
		limit := cgroupCPULimit(self, read)
		if limit < 0 || math.IsNaN(limit) || math.IsInf(limit, 0) {
			t.Fatalf("limit %v from %q, %q, %q", limit, self, quota, period)
		}
		n := quotaCPUs(limit)
		switch {
		case limit == 0 || limit > maxQuotaCPUs:
			if n != 0 {
				t.Fatalf("limit %v: %d CPUs, want 0", limit, n)
			}
		case n < 1 || float64(n) < limit-1e-9 || float64(n) >= limit+1:
			t.Fatalf("limit %v: %d CPUs", limit, n)
		}
	})
}
