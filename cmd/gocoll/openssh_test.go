//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/launcher"
)

// sshdPath is Debian's OpenSSH server (package openssh-server).
const sshdPath = "/usr/sbin/sshd"

// startSSHD runs OpenSSH's sshd in the foreground in namespace ns,
// listening on addr:22 and taking only the key in authorized (root's
// login included), with the host key and config in dir; it is killed at
// the test's end.
func startSSHD(t *testing.T, l *lab.Lab, node lab.Node, dir, hostKey, authorized string) {
	t.Helper()
	cfg := filepath.Join(dir, "sshd_config."+node.NS)
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Join([]string{
		"ListenAddress " + node.Addr.String(), "Port 22", "HostKey " + hostKey, "AuthorizedKeysFile " + authorized,
		"PidFile " + filepath.Join(dir, "sshd."+node.NS+".pid"), "PermitRootLogin prohibit-password",
		"PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
		"AcceptEnv no", "LogLevel ERROR", "",
	}, "\n")), 0o600))
	cmd, err := l.Command(t.Context(), node.NS, sshdPath, "-D", "-e", "-f", cfg)
	require.NoError(t, err)
	var log strings.Builder
	cmd.Stderr = &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd in %s:\n%s", node.NS, log.String())
		}
	})
}

// A job across two lab hosts (network namespaces, two sites) whose ranks
// are started through real OpenSSH: Debian's sshd in each namespace, a
// key made for the test, gocoll run --rsh ssh from the first host. The
// job key travels on ssh's stdin; every collective checks right.
func TestRunOverOpenSSH(t *testing.T) {
	needRoot(t, "network namespaces and sshd")
	if _, err := os.Stat(sshdPath); err != nil {
		t.Skipf("no OpenSSH server here (%v): apt-get install openssh-server", err)
	}
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here: apt-get install openssh-client", tool)
		}
	}
	// sshd wants its privilege separation directory.
	require.NoError(t, os.MkdirAll("/run/sshd", 0o755))
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 1})
	dir := t.TempDir()
	key, hostKey := filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "host_ed25519")
	for _, k := range []string{key, hostKey} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gocoll-test", "-f", k).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	pub, err := os.ReadFile(key + ".pub")
	require.NoError(t, err)
	authorized := filepath.Join(dir, "authorized_keys")
	require.NoError(t, os.WriteFile(authorized, pub, 0o600))
	hosts := l.Hosts()
	var hostfile strings.Builder
	for _, h := range hosts {
		startSSHD(t, l, h, dir, hostKey, authorized)
		// Named by address: that is what ssh dials, and what resolves.
		fmt.Fprintf(&hostfile, "%s slots=2 site=%s\n", h.Addr.String(), lab.SiteName(h.Site))
	}
	hf := filepath.Join(dir, "hostfile")
	require.NoError(t, os.WriteFile(hf, []byte(hostfile.String()), 0o644))
	rsh := "ssh -i " + key + " -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null" +
		" -o ConnectTimeout=10 -o ConnectionAttempts=20 -o LogLevel=ERROR {host}"
	o := runFor(t, 2*time.Minute, nil, "ip", "netns", "exec", hosts[0].NS, bins.gocoll, "run", "--hostfile", hf,
		"--rsh", rsh, "-x", launcher.EnvHeartbeatTimeout+"=10s", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got := okLines(t, o.stdout)
	require.Len(t, got, 4)
	for r := range 4 {
		h := hosts[r/2]
		require.Equal(t, okReport{rank: r, size: 4, local: r % 2, host: h.Addr.String(), site: lab.SiteName(h.Site)}, got[r])
	}
	require.NotContains(t, o.stdout+o.stderr, "GOCOLL_JOB_KEY=", "the key stays off command lines and logs")

	// The ranks ran in sessions of those sshds: ssh set SSH_CONNECTION,
	// from the launcher's host to each rank's.
	o = runFor(t, time.Minute, nil, "ip", "netns", "exec", hosts[0].NS, bins.gocoll, "run", "--hostfile", hf,
		"--rsh", rsh, "--", "/bin/sh", "-c", `set -- $SSH_CONNECTION; echo "$GOCOLL_RANK from $1 to $3:$4"`)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	var want []string
	for r := range 4 {
		want = append(want, fmt.Sprintf("[rank %d] %d from %s to %s:22", r, r, hosts[0].Addr, hosts[r/2].Addr))
	}
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	slices.Sort(lines)
	require.Equal(t, want, lines)
}
