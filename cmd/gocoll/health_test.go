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
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A rank that stops answering (SIGSTOP: its connections stay open) is
// declared dead by the others' heartbeat watchers: their pending AllReduce
// fails naming it, instead of hanging, and the launcher ends the job.
func TestRunStoppedRankIsNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a heartbeat timeout and the launcher's grace: not in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.gocoll, "run", "-np", "3", "-x", "GOCOLL_HEARTBEAT_TIMEOUT=1s",
		"--", bins.collcheck, "-mode", "loop", "-count", "4096")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	pids, _ := readLoopingPIDs(t, stdout, 3)
	const victim = 1
	require.NoError(t, syscall.Kill(pids[victim], syscall.SIGSTOP))
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	require.NoError(t, ctx.Err(), "the job did not end within 30 s")
	require.Error(t, err)
	stderr := errOut.String()
	for _, r := range []int{0, 2} {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^\[rank %d\] collcheck: gocoll: AllReduce.*$`, r)).FindString(stderr)
		require.NotEmpty(t, line, "rank %d printed no error:\n%s", r, stderr)
		require.Contains(t, line, "rank 1: stopped answering: no heartbeat for 1s (host ", "rank %d", r)
	}
	require.Regexp(t, `(?m)^gocoll run: rank [02] on host \S+ failed: exit status 1: .*rank 1: stopped answering`, stderr)
	requireGone(t, pids)
}

// A rank started with GOCOLL_WATCH_STDIN=1 (as gocoll run starts remote
// ranks) ends when its stdin closes: its launcher, or the ssh connection to
// it, is gone.
func TestRankEndsWhenStdinCloses(t *testing.T) {
	cmd := exec.Command(bins.collcheck, "-mode", "loop", "-count", "16")
	cmd.Env = append(os.Environ(), "GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=127.0.0.1:0",
		"GOCOLL_WATCH_STDIN=1", "GOCOLL_INSECURE=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "looping pid="), line)
	require.NoError(t, stdin.Close())
	done := make(chan error, 1)
	go func() { _, _ = io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the rank kept running after its stdin closed")
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, syscall.SIGTERM, ee.Sys().(syscall.WaitStatus).Signal())
	require.Contains(t, errOut.String(), "gocoll: rank 0: the launcher went away (stdin closed); exiting")
}
