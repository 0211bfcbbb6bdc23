//go:build linux

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
)

func TestLabSpecFlags(t *testing.T) {
	s, err := labSpecFlags([]string{"--name", "x1", "--paths", "4", "--rate", "200", "--delay", "2", "--jitter", "0.5",
		"--loss", "1", "--mtu", "9000", "--sites", "3", "--hosts-per-site", "1", "--wan-delay", "10", "--seed", "7", "--l3-hash", "--prio-dscp", "-1"})
	require.NoError(t, err)
	require.Equal(t, lab.Spec{Name: "x1", Paths: 4, RateMbit: 200, DelayMS: 2, JitterMS: 0.5, LossPct: 1, MTU: 9000,
		Sites: 3, HostsPerSite: 1, WANDelayMS: 10, QueueMS: lab.DefaultQueueMS, Seed: 7, L3Hash: true, PriorityDSCP: -1}, s)
	s, err = labSpecFlags(nil)
	require.NoError(t, err)
	require.Equal(t, defaultLabName, s.Name)
	for _, bad := range [][]string{
		{"--paths", "0"}, {"--paths", "x"}, {"--sites", "5"}, {"--sites", "1"}, {"--rate", "-1"}, {"--loss", "200"},
		{"--mtu", "100"}, {"--name", "Bad"}, {"--name", "a-b"}, {"--seed", "5000000000"}, {"--queue-ms", "0"},
		{"--bogus"}, {"extra"}, {"--hosts-per-site", "-2"}, {"--delay", "NaN"}, {"--prio-dscp", "64"},
	} {
		_, err := labSpecFlags(bad)
		require.Error(t, err, "%q", bad)
		require.ErrorAs(t, err, new(usageError), "%q", bad)
	}
}

func FuzzLabSpecFlags(f *testing.F) {
	f.Add("--paths 4 --rate 200 --delay 2 --name abc")
	f.Add("--sites 4 --hosts-per-site 200 --mtu 65000 --loss 100")
	f.Add("--seed -1 --jitter 1e308")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := labSpecFlags(strings.Fields(line))
		if err != nil {
			return
		}
		if err := lab.CheckSpec(s); err != nil {
			t.Fatalf("%q accepted, but the spec is bad: %v", line, err)
		}
	})
}

func TestParseLabFlags(t *testing.T) {
	fsArgs := []string{"p1", "--silent", "--name", "x"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	silent := fs.Bool("silent", false, "")
	name := fs.String("name", "", "")
	pos, err := parseLabFlags(fs, fsArgs)
	require.NoError(t, err)
	require.Equal(t, []string{"p1"}, pos)
	require.True(t, *silent)
	require.Equal(t, "x", *name)

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	name = fs.String("name", "", "")
	pos, err = parseLabFlags(fs, []string{"s1h1", "--name", "y", "--", "sh", "-c", "--name z"})
	require.NoError(t, err)
	require.Equal(t, []string{"s1h1", "sh", "-c", "--name z"}, pos)
	require.Equal(t, "y", *name)
}

// labCLI runs gocoll lab with args and returns its outcome.
func labCLI(t *testing.T, args ...string) outcome {
	t.Helper()
	return runFor(t, time.Minute, nil, append([]string{bins.gocoll, "lab"}, args...)...)
}

func TestLabCommandErrors(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitUsage, labMain(context.Background(), nil, &out, &errb))
	require.Contains(t, out.String(), "usage: gocoll lab")
	for _, args := range [][]string{
		{"nope"}, {"up", "--sites", "9"}, {"cut"}, {"route", "a"}, {"exec", "s1h1"}, {"list", "x"}, {"delayd"},
		{"shape", "--name", "Q", "p1"},
	} {
		out.Reset()
		errb.Reset()
		code := labMain(context.Background(), args, &out, &errb)
		require.Equal(t, exitUsage, code, "%q: %s", args, errb.String())
		require.Equal(t, 1, strings.Count(errb.String(), "\n"), "%q: one line: %q", args, errb.String())
	}
	if os.Geteuid() != 0 {
		o := labCLI(t, "up", "--name", "x")
		require.Equal(t, exitUsage, o.code)
		require.Contains(t, o.stderr, "needs root")
	}
}

// gocoll lab's subcommands drive a lab from the command line, another
// process each, as a user would.
func TestLabCommands(t *testing.T) {
	needRoot(t, "network namespaces")
	name := fmt.Sprintf("%sc%d", *labPrefix, os.Getpid()%100000)
	t.Cleanup(func() { _ = lab.DownName(context.Background(), name) })
	o := labCLI(t, "up", "--name", name, "--paths", "2", "--hosts-per-site", "1", "--rate", "100")
	if o.code == exitUsage && strings.Contains(o.stderr, "not available") {
		t.Skipf("cannot build a lab here: %s", o.stderr)
	}
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "lab "+name+" up in ")

	o = labCLI(t, "list")
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, strings.Fields(o.stdout), name)
	o = labCLI(t, "hostfile", "--name", name, "--slots", "3")
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, name+"-s2h1 slots=3 site=site2 addr=10.2.0.11\n")
	o = labCLI(t, "exec", "--name", name, "s2h1", "--", "cat", "/proc/sys/net/ipv6/conf/all/disable_ipv6")
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, "1\n", o.stdout)
	o = labCLI(t, "exec", "--name", name, "s2h1", "--", "false")
	require.Equal(t, 1, o.code)
	o = labCLI(t, "route", "--name", name, "s1h1", "s2h1", "40000", "5000", "udp")
	require.Equal(t, 0, o.code, o.stderr)
	require.Regexp(t, `^s1-s2/p[12]\n$`, o.stdout)
	o = labCLI(t, "cut", "p2", "--silent", "--name", name)
	require.Equal(t, 0, o.code, o.stderr)
	o = labCLI(t, "shape", "--name", name, "p1", "--dir", "rev", "--loss", "5")
	require.Equal(t, 0, o.code, o.stderr)
	o = labCLI(t, "stats", "--name", name)
	require.Equal(t, 0, o.code, o.stderr)
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	require.Len(t, lines, 5, o.stdout)
	require.Regexp(t, `^s1-s2/p1 +fwd +up .* 100 +0 +0 +0 +0$`, lines[1])
	require.Regexp(t, `^s1-s2/p1 +rev +up .* 100 +0 +0 +5 +0$`, lines[2])
	require.Regexp(t, `^s1-s2/p2 +fwd +silent `, lines[3])
	o = labCLI(t, "restore", "--name", name, "p2")
	require.Equal(t, 0, o.code, o.stderr)
	o = labCLI(t, "cut", "--name", name, "p3")
	require.Equal(t, exitUsage, o.code)
	require.Contains(t, o.stderr, "path number must be 1 to 2")

	o = labCLI(t, "down", "--name", name)
	require.Equal(t, 0, o.code, o.stderr)
	o = labCLI(t, "stats", "--name", name)
	require.Equal(t, exitUsage, o.code)
	require.Contains(t, o.stderr, "is not up")
	o = labCLI(t, "down", "--name", name)
	require.Equal(t, 0, o.code, o.stderr) // idempotent
}

// A lab with delay runs its daemon from the gocoll binary given as
// Spec.Delayd.
func TestLabDelaydCommand(t *testing.T) {
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, DelayMS: 1, Delayd: []string{bins.gocoll, "lab", "delayd"}})
	require.NotZero(t, l.DelaydPid("s1r"))
	require.NotZero(t, l.DelaydPid("s2r"))
}
