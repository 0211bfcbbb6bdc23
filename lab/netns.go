//go:build linux

package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = "/run/netns"

// cmdTimeout bounds one ip, tc or iptables command.
const cmdTimeout = 30 * time.Second

// inNetns runs fn on an OS thread that has entered namespace ns and is
// never used again afterwards (the goroutine ends locked, so the runtime
// retires the thread): nothing else ever runs in a namespace by accident.
// Sockets opened by fn stay in ns; goroutines fn starts do not run in it.
func inNetns(ns string, fn func() error) error {
	fd, err := unix.Open(filepath.Join(netnsDir, ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lab: namespace %s: %w", ns, err)
	}
	done := make(chan error, 1)
	go func() {
		defer unix.Close(fd)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("lab: entering namespace %s: %w", ns, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// run runs argv with stdin, bounded by cmdTimeout, and returns its
// standard output; its error carries the command and its standard error.
func run(ctx context.Context, stdin string, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return out.Bytes(), fmt.Errorf("lab: %s: %w: %s", strings.Join(argv, " "), err, msg)
	}
	return out.Bytes(), nil
}

// batch runs `tool -n ns -batch -` (tool is ip or tc) over lines, which
// fails at its first failing line.
func batch(ctx context.Context, tool, ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	_, err := run(ctx, strings.Join(lines, "\n")+"\n", tool, "-n", ns, "-batch", "-")
	return err
}

// nsInode returns the inode of the namespace mounted at /run/netns/ns.
func nsInode(ns string) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(netnsDir, ns), &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// pidsIn returns the processes whose network namespace is one of the
// namespaces with these inodes (as `ip netns pids` finds them).
func pidsIn(inodes map[uint64]bool) []int {
	if len(inodes) == 0 {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) == nil && inodes[st.Ino] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killIn kills every process in the namespaces (SIGTERM, then SIGKILL for
// those still there after grace) and waits, up to a deadline, until none is
// left. It returns the pids still there.
func killIn(inodes map[uint64]bool, grace time.Duration) []int {
	pids := pidsIn(inodes)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		pids = pidsIn(inodes)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline = time.Now().Add(5 * time.Second)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		pids = pidsIn(inodes)
	}
	return pids
}

// addNetns creates the named namespace, with IPv6 off (no router
// solicitations or neighbour discovery in the counters).
func addNetns(ctx context.Context, ns string) error {
	if _, err := run(ctx, "", "ip", "netns", "add", ns); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return inNetns(ns, func() error {
		return setSysctls([][2]string{
			{"net/ipv6/conf/all/disable_ipv6", "1"},
			{"net/ipv6/conf/default/disable_ipv6", "1"},
		})
	})
}

// setSysctls writes net sysctls (paths under /proc/sys) in the calling
// thread's network namespace: /proc/sys/net follows the thread's
// namespace.
func setSysctls(kv [][2]string) error {
	for _, e := range kv {
		k, v := e[0], e[1]
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0); err != nil {
			return fmt.Errorf("lab: sysctl %s=%s: %w", strings.ReplaceAll(k, "/", "."), v, err)
		}
	}
	return nil
}

// delNetns deletes the named namespace; a missing one is not an error.
func delNetns(ctx context.Context, ns string) error {
	if _, ok := nsInode(ns); !ok {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	_, err := run(ctx, "", "ip", "netns", "del", ns)
	return err
}
