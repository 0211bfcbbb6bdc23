//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests start the command's ranks as processes (launcher/job), which
// only Unix systems do.

// The command with no launcher starts its ranks as processes (this test
// binary, which runs the command when envTestArgs is set), which join
// through gocoll.Init, train, and pass both checks; -transport reaches them.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 processes; -short skips it")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, transport := range []string{"", "tcp"} {
		t.Run("transport="+transport, func(t *testing.T) {
			args := []string{"-ranks", "3", "-samples", "301", "-epochs", "2", "-width", "16", "-depth", "2", "-batch", "7", "-bucket-kib", "1"}
			want := "3 ranks as processes (gocoll), transport "
			if transport != "" {
				args = append(args, "-transport", transport)
				want += transport + "\n"
			}
			argsJSON, err := json.Marshal(args)
			require.NoError(t, err)
			self := program{path: exe, env: []string{envTestArgs + "=" + string(argsJSON)}}
			var out, errOut bytes.Buffer
			require.Equal(t, 0, run(args, self, &out, &errOut), "stdout:\n%s\nstderr:\n%s", &out, &errOut)
			text := out.String()
			require.Contains(t, text, want)
			require.Equal(t, 3, strings.Count(text, "\nepoch "))
			require.Regexp(t, `communication: \S+ per step, \d+% of it hidden behind backward\n`, text)
			require.Contains(t, text, "check (a): weights bitwise identical on all 3 ranks: ok\n")
			require.Regexp(t, `check \(b\): max \|data-parallel - single-process\| / max \|weight\| = \S+ \(limit 0.0001\): ok\n`, text)
			require.NotContains(t, text, "FAILED")
		})
	}
}

// lineWatcher is an io.Writer that keeps what it is given and closes seen
// once the text holds want.
type lineWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Ctrl-C during training reaches the ranks (the job forwards it), whose
// collectives end: the command returns 130 with one line, and leaves no
// rank running (job.Run returns only once every rank is reaped).
func TestProcessesInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2 processes; -short skips it")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	args := []string{"-ranks", "2", "-epochs", "10000", "-width", "64", "-depth", "2", "-samples", "2000", "-check=false"}
	argsJSON, err := json.Marshal(args)
	require.NoError(t, err)
	self := program{path: exe, env: []string{envTestArgs + "=" + string(argsJSON)}}
	out := &lineWatcher{want: "\nepoch   1 ", seen: make(chan struct{})}
	var errOut bytes.Buffer
	status := make(chan int, 1)
	go func() { status <- run(args, self, out, &errOut) }()
	select {
	case <-out.seen: // training runs, and spawn has caught SIGINT since before it started
	case code := <-status:
		t.Fatalf("ended with status %d before the first epoch:\n%s\n%s", code, out, &errOut)
	case <-time.After(time.Minute):
		t.Fatalf("no epoch within a minute:\n%s", out)
	}
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case code := <-status:
		require.Equal(t, exitInterrupted, code, "stdout:\n%s\nstderr:\n%s", out, &errOut)
		require.Equal(t, "allreduce: interrupted\n", errOut.String())
	case <-time.After(time.Minute):
		t.Fatal("still running a minute after SIGINT")
	}
}
