package job

import (
	"context"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/gocoll/gocoll/launcher/store"
)

// outputDrain bounds the wait for a rank's output after it exited (a
// process it left behind may hold the pipe open).
const outputDrain = 2 * time.Second

// Run starts every rank of s and follows them until all have ended; see
// the package doc for what it does when one fails. It returns an error,
// one line, if the job cannot start (bad input, a program or host that
// does not exist); then no rank is left running. Otherwise it returns the
// Result, whose ExitCode is the launcher's exit status. ctx ending stops
// the job like --timeout.
func Run(ctx context.Context, s Spec) (*Result, error) {
	return run(ctx, s, runOptions{})
}

// runOptions are what RunRestarting's rounds of a job of several nodes
// give run beyond the Spec.
type runOptions struct {
	// served, if not nil, is the store node 0's launcher serves for every
	// round; run uses it rather than serving its own, and leaves it open.
	served *store.Server
	// stop, once closed, stops the ranks as a failure elsewhere does
	// (SIGTERM, then SIGKILL after KillAfter), and Result.Superseded says
	// so: another node asked for a restart or ended the job.
	stop <-chan struct{}
}

// run is Run with o.
func run(ctx context.Context, s Spec, o runOptions) (*Result, error) {
	start := time.Now()
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := makePlan(ctx, s)
	if err != nil {
		return nil, err
	}
	if s.OutputDir != "" {
		if err := os.MkdirAll(s.OutputDir, 0o755); err != nil {
			return nil, fmt.Errorf("--output-dir: %v", err)
		}
	}
	var local store.Store // the launcher's store, if it serves one
	if p.store == StoreLauncher && o.served != nil {
		p.storeAddr = p.launcherStoreAddr(o.served.Addr().(*net.TCPAddr))
		local = o.served.Local()
	} else if p.store == StoreLauncher {
		srv, err := store.Listen(context.Background(), p.storeBind, store.Config{JobKey: p.jobKey})
		if err != nil {
			return nil, fmt.Errorf("serving the store: %v", err)
		}
		defer closeStore(srv, s.Stderr)
		p.storeAddr = p.launcherStoreAddr(srv.Addr().(*net.TCPAddr))
		local = srv.Local()
	}
	sinks := outputSinks{stdout: &lockedWriter{w: p.spec.Stdout}, stderr: &lockedWriter{w: p.spec.Stderr},
		dir: p.spec.OutputDir, untagged: p.spec.Untagged}
	procs, err := startAll(p, sinks)
	if err != nil {
		return nil, err
	}
	m := &monitor{spec: s, procs: procs, res: &Result{}, stopC: o.stop,
		diag: &diagnoser{procs: procs, out: sinks.stderr, wait: s.DiagnoseWait, stalled: map[[2]uint64]bool{}}}
	dctx, stopDiag := context.WithCancel(context.Background())
	m.diag.connect(dctx, p, local)
	links := m.diag.watchLinks(dctx) // links.go
	go m.diag.followStalls(dctx)
	m.follow(ctx)
	stopDiag()
	m.diag.drain()
	for _, pr := range procs {
		pr.waitOutput(outputDrain)
	}
	m.res.Elapsed = time.Since(start)
	if m.res.Hang == nil {
		m.res.Hang = m.diag.latest()
	}
	m.res.fill(procs)
	m.res.Links = links()
	return m.res, nil
}

// startAll starts every rank; if one cannot start, it kills those started.
func startAll(p *plan, sinks outputSinks) ([]*proc, error) {
	procs := make([]*proc, 0, len(p.placements))
	for r, pl := range p.placements {
		argv, env := p.command(r)
		pr, err := startProc(p.globalRank(r), pl.Host, !p.local[r], argv, env, p.binding(r), sinks, p.spec.TailLines)
		if pr != nil {
			procs = append(procs, pr)
		}
		if err != nil {
			for _, started := range procs {
				_ = started.signal(syscall.SIGKILL)
				started.closeStdin()
				started.wait()
			}
			return nil, err
		}
	}
	return procs, nil
}

// monitor follows a running job.
type monitor struct {
	spec  Spec
	procs []*proc
	res   *Result
	diag  *diagnoser

	running  int
	failed   bool             // a rank failed on its own
	stopping bool             // ranks have been (or will be) told to stop
	stopC    <-chan struct{}  // closed: stop the ranks (runOptions.stop)
	graceC   <-chan time.Time // ends the grace after the first failure
	killC    <-chan time.Time // SIGKILL time
}

// follow returns once every rank has been reaped.
func (m *monitor) follow(ctx context.Context) {
	exits := make(chan *proc, len(m.procs))
	for _, pr := range m.procs {
		go func() { pr.wait(); exits <- pr }()
	}
	m.running = len(m.procs)
	var timeoutC <-chan time.Time
	if m.spec.Timeout > 0 {
		t := time.NewTimer(m.spec.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var diagnoseC <-chan time.Time
	if m.spec.DiagnoseEvery > 0 {
		t := time.NewTicker(m.spec.DiagnoseEvery)
		defer t.Stop()
		diagnoseC = t.C
	}
	ctxDone := ctx.Done()
	for m.running > 0 {
		select {
		case pr := <-exits:
			m.exited(pr)
		case sig := <-m.spec.Signals:
			m.forward(sig)
		case <-diagnoseC:
			if !m.stopping {
				m.diag.reportAsync(WhyDiagnose)
			}
		case <-timeoutC:
			m.timedOut()
		case <-ctxDone:
			ctxDone = nil
			m.timedOut()
		case <-m.stopC:
			m.stopC = nil
			m.superseded()
		case <-m.graceC:
			m.graceC = nil
			m.terminate()
		case <-m.killC:
			m.killC = nil
			m.signalAll(syscall.SIGKILL)
		}
	}
}

// superseded stops every rank still running because another node asked
// (runOptions.stop); ranks that failed before stay the run's failures.
func (m *monitor) superseded() {
	m.res.Superseded = true
	if m.stopping {
		return
	}
	m.graceC = nil
	m.terminate()
}

// timedOut ends the job at its timeout: it prints the hang report
// (waiting for the ranks' answers up to Spec.DiagnoseWait), then stops
// every rank.
func (m *monitor) timedOut() {
	m.res.TimedOut = true
	if !m.stopping {
		m.res.Hang = m.diag.report(WhyTimeout)
		for _, pr := range m.procs {
			pr.noteFrozen()
		}
	}
	m.terminate()
}

// exited handles a reaped rank: the first failure starts the grace.
func (m *monitor) exited(pr *proc) {
	m.running--
	pr.closeStdin()
	if !pr.failed() || m.failed || m.stopping {
		return
	}
	if m.spec.OnFailure == OnFailureContinue {
		m.failed = true // the others go on; the result still reports it
		return
	}
	for _, other := range m.procs {
		other.noteFrozen()
	}
	m.failed, m.stopping = true, true
	if m.running > 0 {
		m.graceC = time.After(m.spec.Grace)
	}
}

// forward passes sig on to every rank; SIGINT, SIGTERM and SIGHUP also
// stop the job, and a second SIGINT kills it.
func (m *monitor) forward(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return
	}
	switch s {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
		if m.res.Interrupted != 0 && s == syscall.SIGINT {
			m.signalAll(syscall.SIGKILL)
			return
		}
		if m.res.Interrupted == 0 {
			m.res.Interrupted = s
		}
		m.stopping, m.graceC = true, nil
		for _, pr := range m.procs {
			pr.markStopped()
		}
		m.signalAll(s)
		m.closeAllStdin()
		m.armKill()
	case sigDiagnose:
		m.diag.reportAsync(WhySignal)
	default:
		m.signalAll(s)
	}
}

// terminate sends SIGTERM to every rank still running and arms SIGKILL;
// a rank whose process is stopped (SIGSTOP), which cannot act on SIGTERM
// before it is continued, gets SIGKILL at once.
func (m *monitor) terminate() {
	m.stopping = true
	for _, pr := range m.procs {
		pr.stop()
		pr.killIfStopped()
	}
	m.armKill()
}

func (m *monitor) armKill() {
	if m.killC == nil {
		m.killC = time.After(m.spec.KillAfter)
	}
}

func (m *monitor) signalAll(sig syscall.Signal) {
	for _, pr := range m.procs {
		_ = pr.signal(sig)
	}
}

func (m *monitor) closeAllStdin() {
	for _, pr := range m.procs {
		pr.closeStdin()
	}
}
