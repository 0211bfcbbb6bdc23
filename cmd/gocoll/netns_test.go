//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/launcher"
)

// labPrefix starts the names of the labs these tests build; the pid and
// a count follow, so that test processes running at once do not collide.
var labPrefix = flag.String("labprefix", "gc", "prefix of the names of the labs the tests build")

var labCount atomic.Int32

// upLab builds a lab (package lab) for the test and tears it down at its
// end, checking that nothing is left; it skips where namespaces cannot be
// made.
func upLab(t *testing.T, spec lab.Spec) *lab.Lab {
	t.Helper()
	needRoot(t, "network namespaces")
	spec.Name = fmt.Sprintf("%s%d%d", *labPrefix, os.Getpid()%100000, labCount.Add(1))
	ctx := context.Background()
	l, err := lab.Up(ctx, spec)
	if errors.Is(err, lab.ErrUnavailable) {
		t.Skipf("cannot build a lab here: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, l.Down(ctx))
		_, err := lab.Open(spec.Name)
		require.ErrorIs(t, err, lab.ErrNoLab)
	})
	return l
}

// writeLabHostfile writes the lab's hosts with the sites interleaved, to show
// that ranks are numbered site by site whatever the order of the lines.
func writeLabHostfile(t *testing.T, l *lab.Lab) string {
	lines := strings.Split(strings.TrimSpace(l.Hostfile(2)), "\n")
	require.Len(t, lines, 5) // a comment, then four hosts
	text := strings.Join([]string{lines[0], lines[1], lines[3], lines[2], lines[4]}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// 2 sites x 2 hosts x 2 ranks in network namespaces, started with
// --rsh 'ip netns exec {host}': every collective exact, ranks numbered site
// by site, and the rank-order ring crosses between sites exactly twice.
func TestRunTwoSitesInNamespaces(t *testing.T) {
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 2, Paths: 2})
	hostfile := writeLabHostfile(t, l)
	o := gocollRun(t, 2*time.Minute, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"-x", launcher.EnvHeartbeatTimeout+"=10s", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	t.Logf("gocoll run output:\n%s", o.stdout)
	requirePrefixed(t, o.stdout, 8)
	got := okLines(t, o.stdout)
	require.Len(t, got, 8)
	hosts := l.Hosts()
	for r := range 8 {
		h := hosts[r/2] // site 1's hosts first, then site 2's
		require.Equal(t, okReport{rank: r, size: 8, local: r % 2, host: h.NS, site: lab.SiteName(h.Site)}, got[r])
	}
	require.Contains(t, o.stdout, fmt.Sprintf("[rank 0] topology: sites [site1 site2], hosts [%s %s %s %s]\n",
		hosts[0].NS, hosts[1].NS, hosts[2].NS, hosts[3].NS))
	require.Contains(t, o.stdout, "[rank 0] rank-order ring crosses sites 2 times; RingOrder is rank order: true\n")
}

// In the lab, a killed rank on one site is named by the launcher and the
// job ends, across sites too.
func TestRunNamespaceRankKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second lab: not in -short")
	}
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 2, Paths: 2})
	o := gocollRun(t, time.Minute, "--hostfile", writeLabHostfile(t, l), "--rsh", "ip netns exec {host}", "--",
		bins.collcheck, "-mode", "exit", "-rank", "5", "-code", "9")
	require.Equal(t, 9, o.code, o.stderr)
	require.Regexp(t, `(?m)^gocoll run: rank 5 on host `+l.Hosts()[2].NS+` failed: exit status 9`, o.stderr)
}
