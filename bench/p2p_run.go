package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
)

// The kind of a p2p message, in its first byte. Rank 1 keeps a window of
// receives posted and cannot know when rank 0 stops, so rank 0 marks its
// last message, and then sends one padding message for each other receive
// rank 1 has posted by then (the window less one).
const (
	p2pData byte = iota
	p2pLast
	p2pPad
)

// mainP2P is gocoll bench p2p; args start with P2PCommand.
func mainP2P(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := ParseP2PArgs(args[1:])
	if errors.Is(err, ErrHelp) {
		writeP2PUsage(stdout)
		return ExitOK
	}
	if err != nil {
		return usageError(stderr, err)
	}
	job, launched, err := launchedJob()
	if err != nil {
		return usageError(stderr, err)
	}
	if launched {
		return runP2PLaunched(ctx, o, job, stdout, stderr)
	}
	if o.Transport == "" {
		o.Transport = launcher.TransportMetaRoCE
	}
	if o.InProcess {
		return runP2PInProcess(ctx, o, stdout, stderr)
	}
	transport := o.Transport
	if transport == "mptcp" {
		transport = launcher.TransportAuto // the ranks connect MPTCP themselves (joinJob)
	}
	return spawnJob(ctx, 2, transport, args, stdout, stderr) // the ranks' GOCOLL_TRANSPORT
}

// runP2PLaunched runs this process's rank of a job a launcher started:
// ranks 0 and 1 take part, any others wait at the closing barrier.
func runP2PLaunched(ctx context.Context, o P2POptions, job launcher.Job, stdout, stderr io.Writer) int {
	if job.Size < 2 {
		return usageError(stderr, fmt.Errorf("p2p needs 2 ranks, the launcher started %d", job.Size))
	}
	if o.InProcess {
		return usageError(stderr, errors.New("--in-process: this process is already one rank of a launched job"))
	}
	bo := Options{Transport: o.Transport, Timeout: o.Timeout}
	if err := fitLauncher(&bo, job); err != nil {
		return usageError(stderr, err)
	}
	comm, finish, err := joinJob(ctx, &bo, job)
	if err != nil {
		return runError(stderr, err)
	}
	defer func() { _ = comm.Close() }()
	o.Transport = bo.Transport
	var rep *p2pReport
	if job.Rank == 0 {
		rep = newP2PReport(stdout, o, fmt.Sprintf("%d processes (%s)", job.Size, job.Launcher))
	}
	err = runP2PMember(ctx, comm, o, rep)
	if err == nil {
		err = finish(ctx, o.Time+o.Timeout)
	}
	if err != nil {
		return runError(stderr, fmt.Errorf("rank %d: %w", job.Rank, err))
	}
	return ExitOK
}

// runP2PInProcess runs both ranks as goroutines of this process.
func runP2PInProcess(ctx context.Context, o P2POptions, stdout, stderr io.Writer) int {
	if o.Transport == launcher.TransportAuto {
		o.Transport = inProcessAuto()
	}
	setup, cancel := context.WithTimeout(ctx, o.Timeout)
	eps, closeWorld, err := localWorld(setup, o.Transport, 2)
	cancel()
	if err != nil {
		return runError(stderr, fmt.Errorf("connecting 2 ranks over %s: %w", o.Transport, err))
	}
	defer func() { _ = closeWorld() }()
	g, gctx := errgroup.WithContext(ctx)
	for r, ep := range eps {
		g.Go(func() error {
			comm, err := collective.New(ep, 0, collective.Config{Timeout: o.Time + o.Timeout})
			if err != nil {
				return err
			}
			defer func() { _ = comm.Close() }()
			var rep *p2pReport
			if r == 0 {
				rep = newP2PReport(stdout, o, "goroutines of one process")
			}
			if err := runP2PMember(gctx, comm, o, rep); err != nil {
				return fmt.Errorf("rank %d: %w", r, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return runError(stderr, err)
	}
	return ExitOK
}

// runP2PMember is one rank's part: rank 0 sends and reports to rep, rank
// 1 receives, others do nothing.
func runP2PMember(ctx context.Context, comm *collective.Comm, o P2POptions, rep *p2pReport) error {
	ctx, cancel := context.WithTimeout(ctx, o.Time+o.Timeout)
	defer cancel()
	switch comm.Rank() {
	case 0:
		return p2pSend(ctx, comm, o, rep)
	case 1:
		return p2pRecv(ctx, comm, o)
	}
	return nil
}

// p2pWindow is a window of posted messages, one buffer per slot.
type p2pWindow struct {
	bufs    [][]byte
	handles []*collective.Handle
	timeout time.Duration
}

func newP2PWindow(o P2POptions) *p2pWindow {
	w := &p2pWindow{bufs: make([][]byte, o.inFlight()), handles: make([]*collective.Handle, o.inFlight()), timeout: o.Timeout}
	for i := range w.bufs {
		w.bufs[i] = make([]byte, o.MsgBytes)
	}
	return w
}

// wait waits for slot i's message, if one is posted there.
func (w *p2pWindow) wait(ctx context.Context, i int) error {
	h := w.handles[i]
	if h == nil {
		return nil
	}
	w.handles[i] = nil
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	return h.Wait(ctx)
}

// waitAll waits for every posted message.
func (w *p2pWindow) waitAll(ctx context.Context) error {
	for i := range w.handles {
		if err := w.wait(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// p2pSend sends to rank 1 for o.Time, window full, while a sampler
// reports every o.Interval.
func p2pSend(ctx context.Context, comm *collective.Comm, o P2POptions, rep *p2pReport) error {
	w, k := newP2PWindow(o), o.inFlight()
	start := time.Now()
	sctx, stopSampler := context.WithCancel(ctx)
	defer stopSampler()
	smp := startSampler(sctx, comm, 1, start, o, rep)
	deadline := start.Add(o.Time)
	post := func(n int, kind byte) error {
		slot := n % k
		if err := w.wait(ctx, slot); err != nil {
			return err
		}
		w.bufs[slot][0] = kind
		w.handles[slot] = collective.SendAsync(ctx, comm, w.bufs[slot], 1)
		return nil
	}
	n := 0
	var err error
	for err == nil {
		kind := p2pData
		if !time.Now().Before(deadline) {
			kind = p2pLast
		}
		err = post(n, kind)
		n++
		if kind == p2pLast {
			break
		}
	}
	for range k - 1 {
		if err == nil {
			err = post(n, p2pPad)
			n++
		}
	}
	if err == nil {
		err = w.waitAll(ctx)
	}
	if err != nil {
		stopSampler()
	}
	if serr := smp.wait(); err == nil {
		err = serr
	}
	return err
}

// p2pRecv receives from rank 0, a window of receives posted, until the
// last message and the padding after it.
func p2pRecv(ctx context.Context, comm *collective.Comm, o P2POptions) error {
	w, k := newP2PWindow(o), o.inFlight()
	for i := range k {
		w.handles[i] = collective.RecvAsync(ctx, comm, w.bufs[i], 0)
	}
	posted, last := k, -1
	for j := 0; j < posted; j++ {
		slot := j % k
		if err := w.wait(ctx, slot); err != nil {
			return err
		}
		switch kind := w.bufs[slot][0]; {
		case kind == p2pLast && last < 0:
			last = j
		case kind == p2pPad && last >= 0, kind == p2pData && last < 0:
		default:
			return fmt.Errorf("message %d is of kind %d (last message: %d): rank 0 runs another p2p protocol", j, kind, last)
		}
		if last < 0 {
			w.handles[slot] = collective.RecvAsync(ctx, comm, w.bufs[slot], 0)
			posted++
		}
	}
	return nil
}
