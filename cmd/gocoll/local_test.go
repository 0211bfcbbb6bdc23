//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunFourLocalRanksEveryCollective(t *testing.T) {
	o := gocollRun(t, time.Minute, "-np", "4", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Empty(t, o.stderr)
	requirePrefixed(t, o.stdout, 4)
	got := okLines(t, o.stdout)
	require.Len(t, got, 4)
	for r := range 4 {
		require.Equal(t, 4, got[r].size)
		require.Equal(t, r, got[r].local)
		require.Equal(t, "default", got[r].site)
	}
	require.Contains(t, o.stdout, "[rank 0] rank-order ring crosses sites 0 times; RingOrder is rank order: true\n")
}

func TestRunSixteenLocalRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("16 processes: not in -short")
	}
	o := gocollRun(t, 2*time.Minute, "--hosts", "localhost:16", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Len(t, okLines(t, o.stdout), 16)
}

func TestRunReportsFailedRank(t *testing.T) {
	o := gocollRun(t, time.Minute, "-np", "3", "--", bins.collcheck, "-mode", "exit", "-rank", "1", "-code", "7")
	require.Equal(t, 7, o.code, o.stderr)
	require.Regexp(t, `(?m)^gocoll run: rank 1 on host \S+ failed: exit status 7: rank 1 exits with status 7$`, o.stderr)
	require.NotContains(t, o.stderr, "gocoll run: last 1 lines", "the one line is not repeated")
}

// kill -9 of one rank in the middle of AllReduce: every other rank's
// AllReduce returns an error naming it, the launcher exits non-zero naming
// it, and nothing is left running, all within 30 s.
func TestRunKillNineMidAllReduce(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.gocoll, "run", "-np", "4", "--", bins.collcheck, "-mode", "loop")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())

	pids, outText := readLoopingPIDs(t, stdout, 4)
	const victim = 2
	require.NoError(t, syscall.Kill(pids[victim], syscall.SIGKILL))
	rest, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	require.NoError(t, ctx.Err(), "the launcher did not end within 30 s")
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 128+9, ee.ExitCode(), "stderr:\n%s", errOut.String())
	stderr := errOut.String()
	require.Regexp(t, `(?m)^gocoll run: rank 2 on host \S+ failed: killed by signal 9 \(killed\)`, stderr)
	for r := range 4 {
		if r == victim {
			continue
		}
		// Each survivor printed its AllReduce error, and it names rank 2.
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^\[rank %d\] collcheck: gocoll: AllReduce.*$`, r)).FindString(stderr)
		require.NotEmpty(t, line, "rank %d printed no error:\n%s", r, stderr)
		require.Regexp(t, `\brank 2\b`, line)
	}
	requireGone(t, pids)
	require.Less(t, time.Since(start), 30*time.Second)
	_ = outText + string(rest)
}

// readLoopingPIDs reads lines until n ranks said "looping pid=P", and
// returns the pids by rank.
func readLoopingPIDs(t *testing.T, r io.Reader, n int) ([]int, string) {
	t.Helper()
	pids := make([]int, n)
	seen := 0
	var text strings.Builder
	sc := bufio.NewScanner(r)
	re := regexp.MustCompile(`^\[rank (\d+)\] looping pid=(\d+)$`)
	for seen < n && sc.Scan() {
		text.WriteString(sc.Text() + "\n")
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			var rank, pid int
			fmt.Sscan(m[1], &rank)
			fmt.Sscan(m[2], &pid)
			pids[rank] = pid
			seen++
		}
	}
	require.Equal(t, n, seen, "output so far:\n%s", text.String())
	return pids, text.String()
}

// SIGTERM to the launcher reaches every rank; the launcher exits with
// 128+15 and leaves nothing running.
func TestRunForwardsSigterm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.gocoll, "run", "-np", "2", "--", bins.collcheck, "-mode", "loop", "-count", "1024")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	pids, _ := readLoopingPIDs(t, stdout, 2)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 143, ee.ExitCode(), errOut.String())
	require.Contains(t, errOut.String(), "gocoll run: stopped by signal 15 (terminated)")
	requireGone(t, pids)
}

func TestRunOutputFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	o := gocollRun(t, time.Minute, "-np", "2", "--output-dir", dir, "--", bins.collcheck)
	require.Equal(t, 0, o.code, o.stderr)
	require.Empty(t, o.stdout)
	for r := range 2 {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank.%d.stdout", r)))
		require.NoError(t, err)
		require.Len(t, okLines(t, string(b)), 1)
	}
}

// Bad input: one line on stderr, a non-zero exit, no rank started.
func TestRunBadInputOneLine(t *testing.T) {
	dir := t.TempDir()
	badHostfile := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(badHostfile, []byte("node1 slots=2\nnode2 slots=two\n"), 0o644))
	unknownHostfile := filepath.Join(dir, "unknown")
	require.NoError(t, os.WriteFile(unknownHostfile, []byte("no-such-host.invalid slots=2\n"), 0o644))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--hostfile", badHostfile, "--", bins.collcheck}, `gocoll run: ` + badHostfile + `:2: slots="two" is not a whole number from 1 to 1048576`},
		{[]string{"--hostfile", unknownHostfile, "--", bins.collcheck}, `gocoll run: host "no-such-host.invalid": unknown`},
		{[]string{"--hosts", "no-such-host.invalid:2", "--", bins.collcheck}, `gocoll run: host "no-such-host.invalid": unknown`},
		{[]string{"-np", "0", "--", bins.collcheck}, "gocoll run: -np 0: want at least 1 rank"},
		{[]string{"-np", "2", "--", "/no/such/program"}, `gocoll run: program "/no/such/program": no such file or directory`},
		{[]string{"-np", "2"}, "gocoll run: no program to run"},
		{[]string{"-np", "2", "--bogus", "--", bins.collcheck}, "gocoll run: unknown flag --bogus (see gocoll run --help)"},
		{[]string{"-np", "two", "--", bins.collcheck}, `gocoll run: -np: bad value "two": not a number (see gocoll run --help)`},
		{[]string{"-np", "2", "--timeout", "soon", "--", bins.collcheck}, `gocoll run: --timeout: bad value "soon": want seconds (5, 2.5) or a duration (90s, 1h)`},
		{[]string{"-np", "1", "--tag-output=maybe", "--", bins.collcheck}, `gocoll run: --tag-output: bad value "maybe": want true or false (see gocoll run --help)`},
		{[]string{"-np", "100000", "--", "/bin/true"}, "gocoll run: -np 100000: at most 65536 ranks in a job"},
		{[]string{"-np", "2", "-x", "GOCOLL_TRANSPORT=ib", "--", bins.collcheck}, `gocoll run: gocoll: GOCOLL_TRANSPORT="ib": want`},
		{[]string{"--hostfile", filepath.Join(dir, "missing"), "--", bins.collcheck}, "gocoll run: --hostfile: open"},
		{[]string{"-np", "3", "--hosts", "localhost:2", "--", bins.collcheck}, "gocoll run: -np 3 but the hosts have 2 slots (--oversubscribe allows more ranks than slots)"},
	}
	for _, c := range cases {
		o := gocollRun(t, 30*time.Second, c.args...)
		require.NotEqual(t, 0, o.code, c.want)
		require.Empty(t, o.stdout, c.want)
		require.True(t, strings.HasPrefix(o.stderr, c.want), "got %q, want prefix %q", o.stderr, c.want)
		require.Equal(t, 1, strings.Count(o.stderr, "\n"), "not one line: %q", o.stderr)
	}
}

// A rank started with the wrong job key is refused by the store: one line
// and exit status 1 from gocoll.Init.
func TestWrongJobKeyOneLine(t *testing.T) {
	ln := startTestStore(t, "the-right-job-key")
	o := runFor(t, 30*time.Second, []string{
		"GOCOLL_RANK=1", "GOCOLL_WORLD_SIZE=2", "GOCOLL_STORE=" + ln, "GOCOLL_STORE_SERVE=0",
		"GOCOLL_JOB_KEY=the-wrong-job-key",
	}, bins.collcheck)
	require.Equal(t, 1, o.code)
	require.Empty(t, o.stdout)
	require.Equal(t, 1, strings.Count(o.stderr, "\n"), o.stderr)
	require.Contains(t, o.stderr, "collcheck: gocoll: rank 1 of 2 (gocoll): the store at "+ln+" refused this job's key (GOCOLL_JOB_KEY)")
}

func TestNoLauncherOneLine(t *testing.T) {
	cmd := exec.Command(bins.collcheck)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(string(out), "\n"), string(out))
	require.Contains(t, string(out), "collcheck: gocoll: no launcher environment")
}

func TestHelpAndUnknownCommand(t *testing.T) {
	for _, arg := range []string{"help", "--help", "-h"} {
		o := runFor(t, 10*time.Second, nil, bins.gocoll, arg)
		require.Equal(t, 0, o.code)
		for _, cmd := range []string{"run", "bench", "lab", "version", "help"} {
			require.Regexp(t, `(?m)^  `+cmd+` +\S`, o.stdout, "%s lists %s", arg, cmd)
		}
	}
	o := runFor(t, 10*time.Second, nil, bins.gocoll)
	require.Equal(t, 2, o.code)
	require.Contains(t, o.stderr, "usage: gocoll COMMAND")
	o = runFor(t, 10*time.Second, nil, bins.gocoll, "launch")
	require.Equal(t, 2, o.code)
	require.Equal(t, "gocoll: unknown command \"launch\" (want run, bench, lab, sim, topo, version or help; see gocoll --help)\n", o.stderr)
	for _, arg := range []string{"version", "--version"} {
		o = runFor(t, 10*time.Second, nil, bins.gocoll, arg)
		require.Equal(t, 0, o.code)
		require.Regexp(t, `^gocoll \S+ .*go1\.\d+.* \w+/\w+\n$`, o.stdout)
	}
	// gocoll run --help: every flag with what it does, defaults where it has them.
	o = runFor(t, 10*time.Second, nil, bins.gocoll, "run", "--help")
	require.Equal(t, 0, o.code, o.stderr)
	for _, want := range []string{"-np, -n N ", "--hosts, -H LIST ", "--oversubscribe ", "--timeout SECONDS ", "--tag-output ",
		"--no-prefix ", "(default ssh -o BatchMode=yes {host})", "(default 2s)", "(default 3s)", "(default auto)", "Exit status:"} {
		require.Contains(t, o.stdout, want)
	}
}

// --timeout takes seconds (mpirun's convention) and durations.
func TestRunTimeoutSeconds(t *testing.T) {
	for _, v := range []string{"1", "0.5", "700ms"} {
		o := gocollRun(t, 30*time.Second, "-np", "1", "--timeout", v, "--", "/bin/sleep", "20")
		require.Equal(t, 124, o.code, "--timeout %s: %s", v, o.stderr)
		require.Contains(t, o.stderr, "gocoll run: job timed out after")
	}
}

// mpirun's conventions: -n, -H, --oversubscribe (up to max_slots), and
// the hostfile forms.
func TestRunMpirunConventions(t *testing.T) {
	o := gocollRun(t, 30*time.Second, "-n", "2", "--", "/bin/sh", "-c", "echo $GOCOLL_RANK/$GOCOLL_WORLD_SIZE")
	require.Equal(t, 0, o.code, o.stderr)
	require.ElementsMatch(t, []string{"[rank 0] 0/2", "[rank 1] 1/2"}, strings.Split(strings.TrimSpace(o.stdout), "\n"), o.stdout)
	o = gocollRun(t, 30*time.Second, "-H", "localhost:2", "--", "/bin/sh", "-c", "echo $GOCOLL_WORLD_SIZE")
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, 2, strings.Count(o.stdout, "] 2\n"), o.stdout)

	dir := t.TempDir()
	hf := filepath.Join(dir, "hosts")
	require.NoError(t, os.WriteFile(hf, []byte("localhost slots=1 max_slots=3\n"), 0o644))
	o = gocollRun(t, 30*time.Second, "--hostfile", hf, "-np", "3", "--", "/bin/true")
	require.Equal(t, 2, o.code)
	require.Equal(t, "gocoll run: -np 3 but the hosts have 1 slots (--oversubscribe allows more ranks than slots)\n", o.stderr)
	o = gocollRun(t, 30*time.Second, "--hostfile", hf, "-np", "3", "--oversubscribe", "--", "/bin/sh", "-c", "echo $GOCOLL_LOCAL_RANK")
	require.Equal(t, 0, o.code, o.stderr)
	require.Len(t, strings.Split(strings.TrimSpace(o.stdout), "\n"), 3)
	o = gocollRun(t, 30*time.Second, "--hostfile", hf, "-np", "4", "--oversubscribe", "--", "/bin/true")
	require.Equal(t, 2, o.code)
	require.Equal(t, "gocoll run: -np 4 but the hosts' max_slots allow 3 ranks\n", o.stderr)

	require.NoError(t, os.WriteFile(hf, []byte("localhost:2\n"), 0o644)) // MPICH
	o = gocollRun(t, 30*time.Second, "--hostfile", hf, "--", "/bin/sh", "-c", "echo $GOCOLL_WORLD_SIZE")
	require.Equal(t, 0, o.code, o.stderr)
	require.Equal(t, 2, strings.Count(o.stdout, "] 2\n"), o.stdout)
}
