//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/launcher"
)

// blockUDPLab builds two lab hosts (one per site), blocks UDP between them
// with iptables in each host's namespace (TCP still flows), and returns
// the lab and a hostfile of two ranks per host.
func blockUDPLab(t *testing.T) (*lab.Lab, string) {
	t.Helper()
	need(t, "iptables-legacy", "test.sh installs iptables")
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 2})
	hosts := l.Hosts()
	require.Len(t, hosts, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, h := range hosts {
		other := hosts[1-i].Addr.String()
		for _, rule := range [][]string{{"OUTPUT", "-d", other}, {"INPUT", "-s", other}} {
			out, err := l.Exec(ctx, h.Name, "iptables-legacy", "-A", rule[0], "-p", "udp", rule[1], rule[2], "-j", "DROP")
			require.NoError(t, err, "%s: %s", h.Name, out)
		}
	}
	path := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(l.Hostfile(2)), 0o644))
	return l, path
}

// UDP is blocked between the two hosts of a lab: with the default
// transport the job completes, the pairs across the hosts over TCP (and
// within a host over shared memory), and each rank says so in one line.
func TestRunUDPBlockedFallsBackToTCP(t *testing.T) {
	l, hostfile := blockUDPLab(t)
	hosts := l.Hosts()
	o := gocollRun(t, 2*time.Minute, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"-x", launcher.EnvUDPProbeTimeout+"=2s", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Len(t, okLines(t, o.stdout), 4)
	for r := range 4 {
		other := hosts[1-r/2].Addr
		lo := 2 * (1 - r/2) // the first rank of the other host
		want := fmt.Sprintf("[rank %d] gocoll: rank %d: UDP to rank %d (%s), rank %d (%s) is blocked "+
			"(no MetaRoCE handshake within 2s): using TCP for those pairs\n", r, r, lo, other, lo+1, other)
		require.Contains(t, o.stderr, want, "rank %d", r)
	}
}

// The same lab with GOCOLL_TRANSPORT=metaroce: every rank fails with one
// line naming the blocked pairs.
func TestRunUDPBlockedForcedMetaRoCEFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second lab: not in -short")
	}
	l, hostfile := blockUDPLab(t)
	hosts := l.Hosts()
	o := gocollRun(t, 2*time.Minute, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"-x", launcher.EnvUDPProbeTimeout+"=2s", "-x", launcher.EnvTransport+"=metaroce", "--", bins.collcheck)
	require.NotEqual(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	a, b := hosts[0].Addr, hosts[1].Addr
	pairs := fmt.Sprintf("UDP is blocked between rank 0 (%s) and rank 2 (%s), rank 0 (%s) and rank 3 (%s), "+
		"rank 1 (%s) and rank 2 (%s), rank 1 (%s) and rank 3 (%s): no MetaRoCE handshake within 2s", a, b, a, b, a, b, a, b)
	for r := range 4 {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^\[rank %d\] .*$`, r)).FindString(o.stderr)
		require.Contains(t, line, pairs, "rank %d:\n%s", r, o.stderr)
	}
	require.Regexp(t, `(?m)^gocoll run: rank \d on host \S+ failed: exit status 1: .*UDP is blocked between`, o.stderr)
}
