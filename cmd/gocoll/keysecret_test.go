//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
)

// During a gocoll run --rsh job across lab namespaces, the job key is on
// no process's command line: not the launcher's, not the rsh command's,
// not a rank's. The rsh command here clears the environment, as ssh does,
// so the remote ranks can only have the key from their stdin, and their
// environment does not hold it either; the job forming at all shows each
// rank proved that key to the store.
func TestJobKeyOnNoCommandLine(t *testing.T) {
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 1})
	dir := t.TempDir()
	hostfile := filepath.Join(dir, "hostfile")
	require.NoError(t, os.WriteFile(hostfile, []byte(l.Hostfile(2)), 0o644))
	// The rsh command stays alive for the job with the rank's command in
	// its argv, as ssh does. The test's own look at the key: the rsh
	// command's environment holds it (printf is the shell's, so it is on
	// no command line either).
	rsh := filepath.Join(dir, "nsexec")
	require.NoError(t, os.WriteFile(rsh, []byte(`#!/bin/sh
printf '%s\n' "$GOCOLL_JOB_KEY" > "`+dir+`/key.$1"
host=$1; shift
ip netns exec "$host" env -i PATH="$PATH" "$@"
`), 0o755))

	cmd := exec.Command(bins.gocoll, "run", "--hostfile", hostfile, "--rsh", rsh+" {host}", "-x", "GOCOLL_DEBUG=debug", "--",
		bins.collcheck, "-mode", "loop", "-count", "64")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-ended
		}
	}
	defer stop()

	// Every rank has joined once each says it loops.
	lines := make(chan string)
	var out strings.Builder // every line, read until gocoll run ends
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(90 * time.Second)
	for looping := 0; looping < 4; {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "gocoll run ended first; stderr:\n%s", stderr.String())
			if strings.Contains(line, "looping pid=") {
				looping++
			}
		case <-timeout:
			t.Fatalf("the ranks did not come up; stderr:\n%s", stderr.String())
		}
	}
	go func() {
		for range lines { // keep the launcher's stdout flowing
		}
	}()

	var key string
	for _, h := range l.Hosts() {
		b, err := os.ReadFile(filepath.Join(dir, "key."+h.NS))
		require.NoError(t, err)
		k := strings.TrimSpace(string(b))
		require.Len(t, k, 64, "gocoll run's generated key")
		require.True(t, key == "" || key == k, "one key per job")
		key = k
	}

	procs, _ := filepath.Glob("/proc/[0-9]*")
	ranks := 0
	for _, p := range procs {
		argv, err := os.ReadFile(p + "/cmdline")
		if err != nil {
			continue // ended meanwhile
		}
		require.NotContains(t, string(argv), key, "%s's command line: %q", p, argv)
		if !bytes.HasPrefix(argv, []byte(bins.collcheck+"\x00")) {
			continue
		}
		ranks++
		env, err := os.ReadFile(p + "/environ")
		if err == nil {
			require.NotContains(t, string(env), key, "rank process %s's environment", p)
			require.Contains(t, string(env), "GOCOLL_JOB_KEY_STDIN=1")
		}
	}
	require.Equal(t, 4, ranks, "the scan saw every rank")

	// Nor is it in what the launcher and the ranks printed, debug logs
	// included.
	stop()
	<-outDone
	require.Contains(t, stderr.String(), "world formed", "GOCOLL_DEBUG=debug logged")
	require.NotContains(t, out.String(), key)
	require.NotContains(t, stderr.String(), key)
}
