package bench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/tcp"
)

// localWorld builds n connected endpoints in this process over the named
// transport (not auto: see inProcessAuto), and the function that closes
// them.
func localWorld(ctx context.Context, name string, n int) ([]transport.Endpoint, func() error, error) {
	if name == "inproc" {
		w, err := inproc.NewWorld(n)
		if err != nil {
			return nil, nil, err
		}
		return w.Endpoints(), w.Close, nil
	}
	if name == launcher.TransportSHM {
		eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
		return endpoints(eps, err)
	}
	if name == "metaroce" {
		eps, err := mrtransport.NewLocalWorld(ctx, n, mrtransport.Config{})
		return endpoints(eps, err)
	}
	eps, err := tcp.NewLocalWorld(ctx, n, tcp.Config{MultipathTCP: name == "mptcp"})
	return endpoints(eps, err)
}

// inProcessAuto is the transport that auto picks for ranks in one process,
// which is one host: shared memory, or MetaRoCE where this platform has no
// shared-memory transport (as the launcher's auto then does).
func inProcessAuto() string {
	if shm.Supported {
		return launcher.TransportSHM
	}
	return launcher.TransportMetaRoCE
}

// endpoints returns eps as transport endpoints and the function that
// closes them all.
func endpoints[E transport.Endpoint](eps []E, err error) ([]transport.Endpoint, func() error, error) {
	if err != nil {
		return nil, nil, err
	}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = ep
	}
	closeAll := func() error {
		var errs []error
		for _, ep := range out {
			errs = append(errs, ep.Close())
		}
		return errors.Join(errs...)
	}
	return out, closeAll, nil
}

// runInProcess runs o.localRanks() ranks as goroutines of this process
// and returns the exit status.
func runInProcess(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	n := o.localRanks()
	if o.Transport == "" {
		o.Transport = launcher.TransportAuto
	}
	p, err := newPlan(o, n)
	if err == nil {
		err = checkMemory(p, n, n)
	}
	if err != nil {
		return usageError(stderr, err)
	}
	if o.Transport == launcher.TransportAuto {
		o.Transport = inProcessAuto()
	}
	setup, cancel := context.WithTimeout(ctx, o.Timeout)
	eps, closeWorld, err := localWorld(setup, o.Transport, n)
	cancel()
	if err != nil {
		return runError(stderr, fmt.Errorf("connecting %d ranks over %s: %w", n, o.Transport, err))
	}
	defer func() { _ = closeWorld() }()

	info := runInfo{opts: o, ranks: n, placement: "goroutines of one process", sharedProc: true}
	var wrong int64
	g, gctx := errgroup.WithContext(ctx)
	for r, ep := range eps {
		g.Go(func() error {
			comm, err := collective.New(ep, 0, commConfig(o))
			if err != nil {
				return err
			}
			defer func() { _ = comm.Close() }()
			var rep reporter
			var prog io.Writer
			if r == 0 {
				rep, prog = newReporter(stdout, info), stderr
			}
			w, err := runMember(gctx, comm, p, rep, prog)
			if err != nil {
				return fmt.Errorf("rank %d: %w", r, err)
			}
			if r == 0 {
				wrong = w
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return runError(stderr, err)
	}
	return wrongStatus(wrong)
}
