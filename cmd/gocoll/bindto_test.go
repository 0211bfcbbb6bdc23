//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/launcher"
)

// standInRsh starts a "remote" rank on this host, as ssh would on another:
// the launcher treats the host as remote (no local name), so the rank
// gets what a remote rank gets (its job key on stdin, GOCOLL_BIND_CORE).
const standInRsh = `sh -c 'shift; exec "$@"' rsh {host}`

// bindTestCores skips unless the test may bind 2 ranks to a core each,
// and the ranks can reach a store the launcher serves at this host's name.
func bindTestCores(t *testing.T) [][]int {
	t.Helper()
	cores := affinity.Cores()
	if len(cores) < 2 {
		t.Skipf("this process may run on %d cores; the test binds 2 ranks a host to one each", len(cores))
	}
	name, err := os.Hostname()
	require.NoError(t, err)
	if _, err := net.LookupHost(name); err != nil {
		t.Skipf("this host's name %q does not resolve (%v): remote ranks could not reach the launcher's store", name, err)
	}
	return cores
}

var affinityLine = regexp.MustCompile(`(?m)^rank (\d+) on (\S+): (.*)$`)

// affinities returns, by rank, the host and the CPUs collcheck -mode
// affinity printed.
func affinities(t *testing.T, out string) map[int][2]string {
	t.Helper()
	got := map[int][2]string{}
	for _, m := range affinityLine.FindAllStringSubmatch(out, -1) {
		var r int
		_, err := fmt.Sscan(m[1], &r)
		require.NoError(t, err)
		got[r] = [2]string{m[2], m[3]}
	}
	return got
}

// --bind-to core binds remote ranks too: two "hosts" reached through a
// stand-in rsh, two ranks each; every thread of each rank's process runs
// on one core, the two ranks of a host on distinct cores (the first and
// second of this host's), whatever host the launcher is on.
func TestBindToCoreRemoteRanks(t *testing.T) {
	cores := bindTestCores(t)
	o := gocollRun(t, 2*time.Minute, "--bind-to", "core", "-H", "fake1:2,fake2:2", "--store", "launcher",
		"--rsh", standInRsh, "--tag-output=false", "--", bins.collcheck, "-mode", "affinity")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	first, second := "cpus "+affinity.Format(cores[0]), "cpus "+affinity.Format(cores[1])
	require.Equal(t, map[int][2]string{
		0: {"fake1", first}, 1: {"fake1", second},
		2: {"fake2", first}, 3: {"fake2", second},
	}, affinities(t, o.stdout), o.stdout)

	// Unbound, a remote rank keeps every CPU.
	o = gocollRun(t, 2*time.Minute, "-H", "fake1:1", "--store", "launcher", "--rsh", standInRsh,
		"--tag-output=false", "--", bins.collcheck, "-mode", "affinity")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	var all []int
	for _, c := range cores {
		all = append(all, c...)
	}
	require.Equal(t, map[int][2]string{0: {"fake1", "cpus " + affinity.Format(all)}}, affinities(t, o.stdout))
}

// More ranks on a remote host than its cores: refused there in one line,
// as on the launcher's host; with --oversubscribe they wrap around.
func TestBindToCoreRemoteOversubscribed(t *testing.T) {
	cores := bindTestCores(t)
	n := len(cores) + 1
	hostArg := fmt.Sprintf("fake1:%d", n)
	o := gocollRun(t, 2*time.Minute, "--bind-to", "core", "-H", hostArg, "--store", "launcher",
		"--rsh", standInRsh, "--", bins.collcheck, "-mode", "affinity")
	require.NotEqual(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	want := fmt.Sprintf("--bind-to core: %d ranks on this host but %d cores to bind them to (--oversubscribe lets ranks share cores, or --bind-to none)\n", n, len(cores))
	require.Regexp(t, `(?m)^\[rank \d+\] collcheck: gocoll: rank \d+ of \d+ \(gocoll\): `+regexp.QuoteMeta(want), o.stderr)
	require.Empty(t, affinities(t, o.stdout))

	o = gocollRun(t, 2*time.Minute, "--bind-to", "core", "--oversubscribe", "-H", hostArg, "--store", "launcher",
		"--rsh", standInRsh, "--tag-output=false", "--", bins.collcheck, "-mode", "affinity")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got := affinities(t, o.stdout)
	require.Len(t, got, n)
	for r := range n {
		require.Equal(t, [2]string{"fake1", "cpus " + affinity.Format(cores[r%len(cores)])}, got[r], "rank %d", r)
	}
}

// --bind-to core across network namespaces (two hosts of a lab, two ranks
// each, started through ip netns exec): each host's ranks bind themselves
// to its first and second cores.
func TestBindToCoreInNamespaces(t *testing.T) {
	cores := affinity.Cores()
	if len(cores) < 2 {
		t.Skipf("this process may run on %d cores; the test binds 2 ranks a host to one each", len(cores))
	}
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 1})
	path := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(l.Hostfile(2)), 0o644))
	o := gocollRun(t, 2*time.Minute, "--hostfile", path, "--rsh", "ip netns exec {host}", "--bind-to", "core",
		"-x", launcher.EnvHeartbeatTimeout+"=10s", "--tag-output=false", "--", bins.collcheck, "-mode", "affinity")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	hosts := l.Hosts()
	first, second := "cpus "+affinity.Format(cores[0]), "cpus "+affinity.Format(cores[1])
	require.Equal(t, map[int][2]string{
		0: {hosts[0].NS, first}, 1: {hosts[0].NS, second},
		2: {hosts[1].NS, first}, 3: {hosts[1].NS, second},
	}, affinities(t, o.stdout), o.stdout)
}
