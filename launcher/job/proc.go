package job

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// proc is one rank's process: the rank itself, or the rsh command that
// runs it remotely. It leads a process group of its own, so that signals
// reach whatever it started too.
type proc struct {
	rank   int
	host   string
	remote bool
	cmd    *exec.Cmd
	stdin  *os.File // remote: the write end of its stdin, closed to say "stop"
	out    *tail
	copies sync.WaitGroup // the goroutines copying its output

	mu      sync.Mutex // guards reaped, so that no signal goes to a reused pid
	reaped  bool
	status  syscall.WaitStatus
	ended   time.Time
	stopped bool // the launcher signalled it to stop
	frozen  bool // its process was stopped (SIGSTOP) when the first rank failed
}

// outputSinks are where ranks' output goes.
type outputSinks struct {
	stdout, stderr *lockedWriter
	dir            string // non-empty: files per rank instead
	untagged       bool   // no "[rank N] " prefix
}

// startProc starts rank r with argv and env, its output going to sinks,
// bound to cpus if any (see startBound).
func startProc(r int, host string, remote bool, argv, env []string, cpus []int, sinks outputSinks, tailLines int) (*proc, error) {
	p := &proc{rank: r, host: host, remote: remote, out: &tail{max: tailLines}}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	var closeAfterStart []*os.File
	defer func() {
		for _, f := range closeAfterStart {
			_ = f.Close()
		}
	}()
	if remote {
		rd, wr, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, p.stdin = rd, wr
		closeAfterStart = append(closeAfterStart, rd)
		if line := keyLine(env); line != nil { // fits the pipe's buffer: never blocks
			if _, err := wr.Write(line); err != nil {
				p.closeStdin()
				_ = rd.Close()
				return nil, fmt.Errorf("rank %d: passing the job key on stdin: %v", r, err)
			}
		}
	}
	readers := make([]*os.File, 0, 2) // stdout, stderr
	for range 2 {
		rd, wr, err := os.Pipe()
		if err != nil {
			p.closeStdin()
			for _, r := range readers {
				_ = r.Close()
			}
			return nil, err
		}
		readers = append(readers, rd)
		closeAfterStart = append(closeAfterStart, wr)
	}
	cmd.Stdout, cmd.Stderr = closeAfterStart[len(closeAfterStart)-2], closeAfterStart[len(closeAfterStart)-1]
	if err := startBound(cmd, cpus); err != nil {
		p.closeStdin()
		for _, rd := range readers {
			_ = rd.Close()
		}
		return nil, fmt.Errorf("starting rank %d on host %s: %v", r, host, unwrapExecError(err))
	}
	p.cmd = cmd
	if err := p.copyOutput(readers, sinks); err != nil {
		_ = p.signal(syscall.SIGKILL)
		return p, err
	}
	return p, nil
}

// copyOutput starts the goroutines that copy the rank's output.
func (p *proc) copyOutput(readers []*os.File, sinks outputSinks) error {
	dsts := []*lockedWriter{sinks.stdout, sinks.stderr}
	prefix := rankPrefix(p.rank)
	if sinks.untagged {
		prefix = nil
	}
	var firstErr error
	for i, rd := range readers {
		dst := dsts[i]
		linePrefix := prefix
		if sinks.dir != "" {
			name := filepath.Join(sinks.dir, "rank."+strconv.Itoa(p.rank)+[]string{".stdout", ".stderr"}[i])
			f, err := os.Create(name)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("rank %d's output file: %v", p.rank, err)
			}
			if err == nil {
				dst, linePrefix = &lockedWriter{w: f}, nil
				defer func() { go func() { p.copies.Wait(); _ = f.Close() }() }()
			}
		}
		p.copies.Add(1)
		go func() {
			defer p.copies.Done()
			defer rd.Close()
			copyLines(rd, dst, linePrefix, p.out, i == 1)
		}()
	}
	return firstErr
}

// wait blocks until the process has exited, then reaps it; the exit
// status is then in p.status. Where awaitExit leaves it unreaped (Linux),
// the pid stays reserved (a zombie) until wait reaps it under p.mu, so
// signal may still use it.
func (p *proc) wait() {
	reaped := awaitExit(p.cmd)
	ended := time.Now() // as close to the exit as this side can tell
	p.mu.Lock()
	defer p.mu.Unlock()
	if !reaped {
		_ = p.cmd.Wait() // the status is in ProcessState whatever the error
	}
	p.status = p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	p.reaped = true
	p.ended = ended
}

// signal sends sig to the process group, unless the process has been
// reaped (its pid may then belong to someone else).
func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	return signalGroup(p.cmd.Process.Pid, sig)
}

// stop asks the rank to end: SIGTERM to its group, and EOF on a remote
// rank's stdin.
func (p *proc) stop() {
	p.markStopped()
	_ = p.signal(syscall.SIGTERM)
	p.closeStdin()
}

// markStopped records that the launcher told the rank to stop, if it is
// still running: how it ends then is not a failure of its own.
func (p *proc) markStopped() {
	p.mu.Lock()
	p.stopped = p.stopped || !p.reaped
	p.mu.Unlock()
}

func (p *proc) closeStdin() {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
}

// failed reports whether the reaped process ended in failure.
func (p *proc) failed() bool {
	return p.status.Signaled() || p.status.ExitStatus() != 0
}

// describe says how the reaped process ended.
func (p *proc) describe() string {
	switch {
	case p.status.Signaled():
		sig := p.status.Signal()
		return fmt.Sprintf("killed by signal %d (%v)", int(sig), sig)
	case p.status.Exited():
		return fmt.Sprintf("exit status %d", p.status.ExitStatus())
	}
	return fmt.Sprintf("ended (%v)", p.status)
}

// waitOutput waits up to d for the output copies to finish.
func (p *proc) waitOutput(d time.Duration) {
	done := make(chan struct{})
	go func() { p.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// whyNoAnswer says, for a hang report, what the launcher knows of a rank
// that did not answer: how it ended, or that its process is stopped.
func (p *proc) whyNoAnswer() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.reaped:
		return "; it has ended: " + p.describe()
	case !p.remote && processStopped(p.cmd.Process.Pid):
		return "; its process is stopped (SIGSTOP or a debugger)"
	}
	return ""
}

// noteFrozen records whether the process, if still running here, is
// stopped (SIGSTOP, a debugger): a rank that holds the others up while
// alive.
func (p *proc) noteFrozen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = !p.reaped && !p.remote && processStopped(p.cmd.Process.Pid)
}

// killIfStopped sends SIGKILL to the process group if the process, here
// and still running, is stopped (SIGSTOP, a debugger).
func (p *proc) killIfStopped() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped && !p.remote && processStopped(p.cmd.Process.Pid) {
		_ = signalGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	}
}
