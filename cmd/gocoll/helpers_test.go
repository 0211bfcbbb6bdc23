package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/store"
)

// bins are the gocoll and collcheck binaries the tests run, built once.
var bins struct{ dir, gocoll, collcheck string }

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gocoll-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Other users (ranks started through ip netns exec, srun) run these.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins.dir = dir
	bins.gocoll = filepath.Join(dir, "gocoll")
	bins.collcheck = filepath.Join(dir, "collcheck")
	for out, pkg := range map[string]string{bins.gocoll: ".", bins.collcheck: "./internal/collcheck"} {
		cmd := exec.Command(goTool(), "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, b)
			return 1
		}
	}
	return m.Run()
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// outcome is how a command ended.
type outcome struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runFor runs argv with extra environment and a deadline.
func runFor(t *testing.T, limit time.Duration, env []string, argv ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	o := outcome{stdout: out.String(), stderr: errOut.String(), took: time.Since(start)}
	require.NoError(t, ctx.Err(), "%v did not end within %v\nstdout:\n%s\nstderr:\n%s", argv, limit, o.stdout, o.stderr)
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.code = 128 + int(ws.Signal())
		}
	} else {
		require.NoError(t, err)
	}
	return o
}

// gocollRun runs gocoll run with args.
func gocollRun(t *testing.T, limit time.Duration, args ...string) outcome {
	return runFor(t, limit, nil, append([]string{bins.gocoll, "run"}, args...)...)
}

// okLines returns, by rank, the "all collectives ok" lines in out (with
// or without gocoll run's prefix), and fails on a rank reporting twice.
var okLine = regexp.MustCompile(`(?m)^(?:\[rank \d+\] )?rank (\d+)/(\d+) on (\S+) site (\S+) local (\d+): all collectives ok$`)

type okReport struct {
	rank, size, local int
	host, site        string
}

func okLines(t *testing.T, out string) map[int]okReport {
	t.Helper()
	got := map[int]okReport{}
	for _, m := range okLine.FindAllStringSubmatch(out, -1) {
		var r okReport
		_, err := fmt.Sscan(m[1], &r.rank)
		require.NoError(t, err)
		fmt.Sscan(m[2], &r.size)
		fmt.Sscan(m[5], &r.local)
		r.host, r.site = m[3], m[4]
		_, dup := got[r.rank]
		require.False(t, dup, "rank %d reported twice", r.rank)
		got[r.rank] = r
	}
	return got
}

// requirePrefixed checks that every line of out starts with "[rank N] ".
func requirePrefixed(t *testing.T, out string, n int) {
	t.Helper()
	prefix := regexp.MustCompile(`^\[rank (\d+)\] `)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := prefix.FindStringSubmatch(line)
		require.NotNil(t, m, "unprefixed line %q", line)
		var r int
		fmt.Sscan(m[1], &r)
		require.Less(t, r, n, line)
	}
}

// need skips the test unless cmd is installed.
func need(t *testing.T, cmd, why string) string {
	t.Helper()
	p, err := exec.LookPath(cmd)
	if err != nil {
		t.Skipf("%s is not installed (%s)", cmd, why)
	}
	return p
}

func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root: %s", why)
	}
}

// startTestStore serves a rendezvous store on loopback with key.
func startTestStore(t *testing.T, key string) string {
	t.Helper()
	k, err := store.ParseJobKey(key)
	require.NoError(t, err)
	srv, err := store.Listen(context.Background(), "127.0.0.1:0", store.Config{JobKey: k})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr().String()
}
