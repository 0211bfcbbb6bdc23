//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stopLimit bounds how long a command may take to end after SIGINT in
// these tests: far more than the 2 s a user waits at most on an idle
// machine, far less than the 60 s --kill-after the launcher tests set, so
// a rank that ignored SIGINT (and waited for SIGKILL) fails the test.
const stopLimit = 30 * time.Second

// startUntil starts argv and reads its stdout until a line contains want;
// it returns the command, the rest of its stdout (to be drained) and its
// stderr buffer.
func startUntil(t *testing.T, ctx context.Context, want string, argv ...string) (*exec.Cmd, io.Reader, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	br := bufio.NewReader(stdout)
	var seen strings.Builder
	for {
		line, err := br.ReadString('\n')
		seen.WriteString(line)
		if strings.Contains(line, want) {
			return cmd, br, &errOut
		}
		require.NoError(t, err, "no line with %q; stdout:\n%s\nstderr:\n%s", want, seen.String(), errOut.String())
	}
}

// descendants returns the pids of every process below pid, from /proc.
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// waitExit waits for cmd and returns its exit status (128+signal if a
// signal ended it) and how long it took from since.
func waitExit(t *testing.T, cmd *exec.Cmd, rest io.Reader, since time.Time) (int, time.Duration) {
	t.Helper()
	_, _ = io.Copy(io.Discard, rest)
	err := cmd.Wait()
	took := time.Since(since)
	if err == nil {
		return 0, took
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), took
	}
	return ee.ExitCode(), took
}

// gocoll bench alone, in the middle of its AllReduces, stops on SIGINT
// (the terminal's Ctrl-C reaches only it: its ranks have process groups
// of their own): exit status 130, one line, no rank left.
func TestBenchAloneStopsOnSigint(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, rest, errOut := startUntil(t, ctx, "# gocoll bench allreduce",
		bins.gocoll, "bench", "allreduce", "-np", "2", "-b", "64K", "-e", "64K", "-n", "100000000")
	ranks := descendants(t, cmd.Process.Pid)
	require.Len(t, ranks, 2)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code, took := waitExit(t, cmd, rest, start)
	require.NoError(t, ctx.Err())
	require.Equal(t, 130, code, errOut.String())
	require.Less(t, took, stopLimit)
	require.Equal(t, "gocoll bench: interrupted (interrupt signal received)\n", errOut.String())
	requireGone(t, ranks)
	t.Logf("stopped %v after SIGINT", took.Round(time.Millisecond))
}

// SIGINT to gocoll run reaches its ranks: gocoll bench ranks (whose main
// turns it into the end of their context) and a program that only calls
// gocoll.Init (Go's default: SIGINT ends it) both end on it, long before
// --kill-after would SIGKILL them; the launcher exits 130 and leaves
// nothing running.
func TestRunSigintStopsRanks(t *testing.T) {
	for name, c := range map[string]struct {
		want string
		argv []string
	}{
		"bench": {"# gocoll bench allreduce", []string{bins.gocoll, "bench", "allreduce", "-b", "64K", "-e", "64K", "-n", "100000000"}},
		"Init":  {"looping pid=", []string{bins.collcheck, "-mode", "loop"}},
	} {
		t.Run(name, func(t *testing.T) {
			argv := append([]string{bins.gocoll, "run", "-np", "2", "--kill-after", "60s", "--"}, c.argv...)
			requireSigintStops(t, c.want, 2, argv...)
		})
	}
}

// SIGINT to gocoll run while its ranks are still forming the world (rank
// 2 never calls gocoll.Init, so ranks 0 and 1 wait for it at the store)
// ends every rank too, long before GOCOLL_CONNECT_TIMEOUT or --kill-after.
func TestRunSigintDuringSetUp(t *testing.T) {
	script := `if [ "$GOCOLL_RANK" = 2 ]; then echo "rank 2 stays out"; exec sleep 100; fi; exec "$0" -mode loop`
	requireSigintStops(t, "rank 2 stays out", 3,
		bins.gocoll, "run", "-np", "3", "--kill-after", "60s", "--", "sh", "-c", script, bins.collcheck)
}

// requireSigintStops starts argv (a gocoll run of nranks ranks) until its
// output shows want, sends it SIGINT and requires that it exits 130, saying
// so, within stopLimit, with no SIGKILL and no rank left.
func requireSigintStops(t *testing.T, want string, nranks int, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, rest, errOut := startUntil(t, ctx, want, argv...)
	ranks := descendants(t, cmd.Process.Pid)
	require.Len(t, ranks, nranks)
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code, took := waitExit(t, cmd, rest, start)
	require.NoError(t, ctx.Err())
	require.Equal(t, 130, code, errOut.String())
	require.Less(t, took, stopLimit, errOut.String())
	require.Contains(t, errOut.String(), "gocoll run: stopped by signal 2 (interrupt)")
	require.NotContains(t, errOut.String(), "signal 9")
	requireGone(t, ranks)
	t.Logf("stopped %v after SIGINT", took.Round(time.Millisecond))
}
