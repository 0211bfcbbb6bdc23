package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher"
)

// lab is two sites of two hosts each, every host a network namespace with
// one address, the sites joined by a router namespace holding one bridge
// per site. The root namespace, where the launcher runs, has no route into
// it: the store must live with rank 0.
type lab struct {
	prefix string
	router string
	hosts  []labHost
}

type labHost struct {
	name, site, addr string
	siteNum, hostNum int
}

func newLab(t *testing.T) *lab {
	t.Helper()
	l := &lab{prefix: fmt.Sprintf("gc%d", os.Getpid()%100000)}
	l.router = l.prefix + "-r"
	for s := 1; s <= 2; s++ {
		for h := 1; h <= 2; h++ {
			l.hosts = append(l.hosts, labHost{
				name: fmt.Sprintf("%s-s%dh%d", l.prefix, s, h), site: fmt.Sprintf("site%d", s),
				addr: fmt.Sprintf("10.%d.0.%d", s, 10+h), siteNum: s, hostNum: h,
			})
		}
	}
	t.Cleanup(l.teardown)
	l.teardown() // a lab left by a killed run of this pid
	if out, err := exec.Command("ip", "netns", "add", l.router).CombinedOutput(); err != nil {
		t.Skipf("this machine cannot create network namespaces: %v: %s", err, out)
	}
	l.ip(t, "-n", l.router, "link", "set", "lo", "up")
	for s := 1; s <= 2; s++ {
		br := fmt.Sprintf("br%d", s)
		l.ip(t, "-n", l.router, "link", "add", br, "type", "bridge")
		l.ip(t, "-n", l.router, "addr", "add", fmt.Sprintf("10.%d.0.1/24", s), "dev", br)
		l.ip(t, "-n", l.router, "link", "set", br, "up")
	}
	l.run(t, "ip", "netns", "exec", l.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	for _, h := range l.hosts {
		peer := fmt.Sprintf("v%d%d", h.siteNum, h.hostNum)
		l.ip(t, "netns", "add", h.name)
		l.ip(t, "-n", h.name, "link", "set", "lo", "up")
		l.ip(t, "link", "add", "eth0", "netns", h.name, "type", "veth", "peer", "name", peer, "netns", l.router)
		l.ip(t, "-n", l.router, "link", "set", peer, "master", fmt.Sprintf("br%d", h.siteNum))
		l.ip(t, "-n", l.router, "link", "set", peer, "up")
		l.ip(t, "-n", h.name, "addr", "add", h.addr+"/24", "dev", "eth0")
		l.ip(t, "-n", h.name, "link", "set", "eth0", "up")
		l.ip(t, "-n", h.name, "route", "add", "default", "via", fmt.Sprintf("10.%d.0.1", h.siteNum))
	}
	return l
}

func (l *lab) ip(t *testing.T, args ...string) { l.run(t, append([]string{"ip"}, args...)...) }

func (l *lab) run(t *testing.T, argv ...string) {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(argv, " "), out)
}

// teardown kills what still runs in the lab's namespaces (only processes
// this test started can be there) and deletes them.
func (l *lab) teardown() {
	names := []string{l.router}
	for _, h := range l.hosts {
		names = append(names, h.name)
	}
	for _, ns := range names {
		out, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
}

// hostfile lists the hosts with the sites interleaved, to show that ranks
// are numbered site by site whatever the order of the lines.
func (l *lab) hostfile(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# two sites x two hosts x two slots\n")
	for _, i := range []int{0, 2, 1, 3} {
		h := l.hosts[i]
		fmt.Fprintf(&b, "%s slots=2 site=%s addr=%s\n", h.name, h.site, h.addr)
	}
	path := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// 2 sites x 2 hosts x 2 ranks in network namespaces, started with
// --rsh 'ip netns exec {host}': every collective exact, ranks numbered site
// by site, and the rank-order ring crosses between sites exactly twice.
func TestRunTwoSitesInNamespaces(t *testing.T) {
	needRoot(t, "network namespaces")
	need(t, "ip", "test.sh installs iproute2")
	l := newLab(t)
	hostfile := l.hostfile(t)
	o := gocollRun(t, 2*time.Minute, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"-x", launcher.EnvHeartbeatTimeout+"=10s", "--", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	t.Logf("gocoll run output:\n%s", o.stdout)
	requirePrefixed(t, o.stdout, 8)
	got := okLines(t, o.stdout)
	require.Len(t, got, 8)
	for r := range 8 {
		h := l.hosts[r/2] // site 1's hosts first, then site 2's
		require.Equal(t, okReport{rank: r, size: 8, local: r % 2, host: h.name, site: h.site}, got[r])
	}
	require.Contains(t, o.stdout, fmt.Sprintf("[rank 0] topology: sites [site1 site2], hosts [%s %s %s %s]\n",
		l.hosts[0].name, l.hosts[1].name, l.hosts[2].name, l.hosts[3].name))
	require.Contains(t, o.stdout, "[rank 0] rank-order ring crosses sites 2 times; RingOrder is rank order: true\n")
}

// In the lab, a killed rank on one site is named by the launcher and the
// job ends, across sites too.
func TestRunNamespaceRankKilled(t *testing.T) {
	needRoot(t, "network namespaces")
	need(t, "ip", "test.sh installs iproute2")
	if testing.Short() {
		t.Skip("builds a second lab: not in -short")
	}
	l := newLab(t)
	o := gocollRun(t, time.Minute, "--hostfile", l.hostfile(t), "--rsh", "ip netns exec {host}", "--",
		bins.collcheck, "-mode", "exit", "-rank", "5", "-code", "9")
	require.Equal(t, 9, o.code, o.stderr)
	require.Regexp(t, `(?m)^gocoll run: rank 5 on host `+l.hosts[2].name+` failed: exit status 9`, o.stderr)
}
