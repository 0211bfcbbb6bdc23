//go:build linux

package lab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// delaydQueue is one NFQUEUE queue of a delay daemon and the delay it
// gives each packet: Delay ± Jitter (uniform, never below zero).
type delaydQueue struct {
	Queue         uint16
	Delay, Jitter time.Duration
}

// Limits of the delay daemon's configuration.
const (
	maxDelaydQueues    = 1024
	maxDelaydConfBytes = 64 << 10
	delaydReadyLine    = "delayd ready"
	delaydStartLimit   = 10 * time.Second
)

// formatDelaydConfig writes the daemon's configuration: one line
// "QUEUE DELAY_US JITTER_US" per queue.
func formatDelaydConfig(qs []delaydQueue) string {
	var b strings.Builder
	b.WriteString("# queue delay_us jitter_us\n")
	for _, q := range qs {
		fmt.Fprintf(&b, "%d %d %d\n", q.Queue, q.Delay.Microseconds(), q.Jitter.Microseconds())
	}
	return b.String()
}

// parseDelaydConfig reads what formatDelaydConfig writes; blank lines and
// lines starting with '#' are skipped. Each queue appears once.
func parseDelaydConfig(data []byte) ([]delaydQueue, error) {
	if len(data) > maxDelaydConfBytes {
		return nil, fmt.Errorf("delayd config larger than %d bytes", maxDelaydConfBytes)
	}
	var qs []delaydQueue
	seen := map[uint16]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("delayd config line %d: want QUEUE DELAY_US JITTER_US", n)
		}
		q, err := strconv.ParseUint(f[0], 10, 16)
		if err != nil {
			return nil, fmt.Errorf("delayd config line %d: queue: %v", n, err)
		}
		var us [2]int64
		for i, s := range f[1:] {
			v, err := strconv.ParseUint(s, 10, 63)
			if err != nil || v > MaxDelayMS*1000 {
				return nil, fmt.Errorf("delayd config line %d: %q is not 0 to %d microseconds", n, s, MaxDelayMS*1000)
			}
			us[i] = int64(v)
		}
		if seen[uint16(q)] {
			return nil, fmt.Errorf("delayd config line %d: queue %d again", n, q)
		}
		if len(qs) == maxDelaydQueues {
			return nil, fmt.Errorf("delayd config: more than %d queues", maxDelaydQueues)
		}
		seen[uint16(q)] = true
		qs = append(qs, delaydQueue{Queue: uint16(q), Delay: time.Duration(us[0]) * time.Microsecond, Jitter: time.Duration(us[1]) * time.Microsecond})
	}
	return qs, sc.Err()
}

// delaydCommand is the command that runs the delay daemon.
func (l *Lab) delaydCommand() ([]string, error) {
	if len(l.plan.spec.Delayd) > 0 {
		return l.plan.spec.Delayd, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("lab: finding the delay daemon: %w", err)
	}
	if strings.HasSuffix(exe, ".test") {
		return []string{exe, testBinaryGuard, "lab", "delayd"}, nil
	}
	return []string{exe, "lab", "delayd"}, nil
}

// ensureDelayd writes router r's delay configuration and has its daemon
// read it: a running daemon by SIGHUP, else a new one, started in the
// router's namespace, that has bound its queues when this returns.
func (l *Lab) ensureDelayd(ctx context.Context, r Node, qs []delaydQueue) error {
	conf := filepath.Join(l.dir, r.Name+".delayd")
	if err := os.WriteFile(conf+".tmp", []byte(formatDelaydConfig(qs)), 0o644); err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	if err := os.Rename(conf+".tmp", conf); err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	if pid := l.st.Delayd[r.Name]; pid != 0 && isDelayd(pid, conf) {
		return syscall.Kill(pid, syscall.SIGHUP)
	}
	argv, err := l.delaydCommand()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(l.dir, r.Name+".delayd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], append(append([]string(nil), argv[1:]...), "--config", conf)...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // not the caller's terminal signals
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	// Started from a thread in the router's namespace, the daemon is born
	// there.
	if err := inNetns(r.NS, cmd.Start); err != nil {
		return fmt.Errorf("lab %s: starting the delay daemon %q in %s: %w", l.Name(), argv[0], r.Name, err)
	}
	go func() { _ = cmd.Wait() }() // reaped if it ends while this process lives
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(io.LimitReader(stdout, 256)).ReadString('\n')
		switch {
		case errors.Is(err, io.EOF):
			err = errors.New("it ended before it was ready")
		case err == nil && strings.TrimSpace(line) != delaydReadyLine:
			err = fmt.Errorf("it said %q", line)
		}
		ready <- err
	}()
	timer := time.NewTimer(delaydStartLimit)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("not ready within %v", delaydStartLimit)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = cmd.Process.Kill()
		logText, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("lab %s: delay daemon in %s (%s): %v; its log: %s", l.Name(), r.Name, strings.Join(argv, " "), err, bytes.TrimSpace(logText))
	}
	if l.st.Delayd == nil {
		l.st.Delayd = map[string]int{}
	}
	l.st.Delayd[r.Name] = cmd.Process.Pid
	return nil
}

// isDelayd says whether process pid is a delay daemon reading conf.
func isDelayd(pid int, conf string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	for _, arg := range bytes.Split(cmdline, []byte{0}) {
		if string(arg) == conf {
			return true
		}
	}
	return false
}

var errDelaydUsage = errors.New("usage: gocoll lab delayd --config FILE")
