package launcher

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// A quota that allows fewer CPUs than the mask caps them; none (0), or
// one at or above the mask, leaves the mask.
func TestUsableProcessors(t *testing.T) {
	for _, tc := range []struct{ cpus, quota, want int }{
		{64, 0, 64}, {64, 2, 2}, {64, 1, 1}, {2, 2, 2}, {2, 8, 2}, {1, 0, 1}, {4, -1, 4},
	} {
		require.Equal(t, tc.want, usableProcessors(tc.cpus, tc.quota), "%+v", tc)
	}
}

// Join holds where the host's ranks outnumber the CPUs the quota allows,
// however wide the mask: 4 ranks in a container of 64 CPUs and a quota of
// 2 hold; with no quota, or one of 4 or more, they do not.
func TestHoldsMonitorWithQuota(t *testing.T) {
	for _, tc := range []struct {
		local, cpus, quota int
		want               bool
	}{
		{4, 64, 2, true}, {4, 64, 3, true}, {4, 64, 4, false}, {4, 64, 0, false}, {4, 64, 8, false},
		{2, 64, 1, true}, {1, 64, 1, false}, {4, 2, 0, true}, {4, 2, 16, true}, {2, 2, 1, true},
	} {
		require.Equal(t, tc.want, holdsMonitor(tc.local, usableProcessors(tc.cpus, tc.quota)), "%+v", tc)
	}
}

// From a fake cgroup tree (cgroup v2, 150 ms a 100 ms period above the
// rank's cgroup): 2 CPUs, so 4 ranks on a host of 64 hold, 2 do not.
func TestHoldsMonitorFromCgroupTree(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("self", "0::/job/rank0\n")
	write("fs/cpu.max", "max 100000\n")
	write("fs/job/cpu.max", "150000 100000\n")
	quota := topology.CPUQuotaAt(filepath.Join(root, "self"), filepath.Join(root, "fs"))
	require.Equal(t, 2, quota)
	require.True(t, holdsMonitor(4, usableProcessors(64, quota)))
	require.False(t, holdsMonitor(2, usableProcessors(64, quota)))
}

// processorsNow never counts more than the quota allows.
func TestProcessorsNowUnderQuota(t *testing.T) {
	n := processorsNow()
	require.GreaterOrEqual(t, n, 1)
	if q := topology.CPUQuota(); q > 0 {
		require.LessOrEqual(t, n, q)
	}
}

// settleMonitor reads the quota: 2 ranks of a host, whose mask allows
// them every CPU of the machine, hold under a quota of 1 CPU (a fake
// cgroup tree's v1 CFS quota, 100 ms a 100 ms period); with the fake
// tree's quota above the machine's CPUs they hold only where the mask
// allows fewer than 2.
func TestSettleMonitorUnderQuota(t *testing.T) {
	if !rawNapWorks {
		t.Skip("no raw nap on " + runtime.GOOS)
	}
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("self", "4:cpu,cpuacct:/job\n")
	write("fs/cpu,cpuacct/job/cpu.cfs_quota_us", "100000\n")
	write("fs/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n")
	t.Cleanup(func() { cpuQuota = topology.CPUQuota })
	cpuQuota = func() int { return topology.CPUQuotaAt(filepath.Join(root, "self"), filepath.Join(root, "fs")) }
	settled := func() bool {
		var out bytes.Buffer
		log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		settleMonitor(context.Background(), hostsOf(2), 0, log)
		return strings.Contains(out.String(), "held the processor")
	}
	require.Equal(t, 1, processorsNow())
	require.True(t, settled(), "2 ranks under a quota of 1 CPU")

	write("fs/cpu,cpuacct/job/cpu.cfs_quota_us", "100000000\n") // 1000 CPUs
	require.Equal(t, processorsNow() < 2, settled(), "a quota of 1000 CPUs over %d processors", processorsNow())
}
