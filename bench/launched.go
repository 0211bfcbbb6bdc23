package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/transport/tcp"
)

// noLauncherPrefix starts launcher.ReadEnv's error when no launcher's
// variables are set at all (the launcher exports no sentinel for it).
const noLauncherPrefix = "gocoll: no launcher environment"

// launchedJob returns the job this process is a rank of, as the launcher's
// variables describe it (gocoll run, mpirun, srun, torchrun, or Main's own
// spawning). ok is false when no launcher started this process; err
// reports variables that are set but wrong.
func launchedJob() (job launcher.Job, ok bool, err error) {
	job, err = launcher.ReadEnv()
	if err != nil && strings.HasPrefix(err.Error(), noLauncherPrefix) {
		return job, false, nil
	}
	return job, true, err
}

// runLaunchedRank runs this process's rank of a job a launcher started.
func runLaunchedRank(ctx context.Context, o Options, job launcher.Job, stdout, stderr io.Writer) int {
	if err := fitLauncher(&o, job); err != nil {
		return usageError(stderr, err)
	}
	p, err := newPlan(o, job.Size)
	if err != nil {
		return usageError(stderr, err)
	}
	comm, finish, err := joinJob(ctx, &o, job)
	if err != nil {
		return runError(stderr, err)
	}
	defer func() { _ = comm.Close() }()
	var rep reporter
	var prog io.Writer
	if job.Rank == 0 {
		rep = newReporter(stdout, runInfo{opts: o, ranks: job.Size, placement: "processes (" + job.Launcher + ")"})
		prog = stderr
	}
	wrong, err := runMember(ctx, comm, p, rep, prog)
	if err == nil {
		err = finish(ctx, o.Timeout)
	}
	if err != nil {
		return runError(stderr, fmt.Errorf("rank %d: %w", job.Rank, err))
	}
	return wrongStatus(wrong)
}

// doneBarrier is the store key prefix of the barrier every rank passes
// before it closes its transport.
const doneBarrier = "gocoll-bench/done"

// fitLauncher checks the options against the job and settles the
// transport: --transport if given, else the launcher's.
func fitLauncher(o *Options, job launcher.Job) error {
	if o.Ranks != 0 && o.Ranks != job.Size {
		return fmt.Errorf("-np %d, but the launcher started %d ranks", o.Ranks, job.Size)
	}
	switch o.Transport {
	case "":
		o.Transport = job.Transport
	case "inproc":
		return errors.New("--transport inproc runs every rank in one process, not under a launcher; use tcp")
	case "mptcp":
		if job.StoreAtRank0 {
			return errors.New("--transport mptcp works only for ranks gocoll bench starts itself (the launcher's transports are tcp, metaroce, shm and auto)")
		}
	}
	if o.InProcess {
		return errors.New("--in-process: this process is already one rank of a launched job")
	}
	return nil
}

// finishFunc waits, before a rank closes its transport, until every rank
// is done with its collectives.
type finishFunc func(ctx context.Context, timeout time.Duration) error

// joinJob builds the world communicator: through the launcher, except for
// MPTCP, which the launcher lacks: then over the store this job's parent
// serves, as the launcher would over TCP. finish is a barrier through the
// store: a rank whose last collective has completed may still have data on
// the way to a peer, and a transport may drop it on Close (TCP delivers it,
// MetaRoCE's datagrams need the peer's acknowledgement).
func joinJob(ctx context.Context, o *Options, job launcher.Job) (*collective.Comm, finishFunc, error) {
	if o.Transport != "mptcp" {
		job.Transport = o.Transport
		w, err := launcher.Join(ctx, job, commConfig(*o))
		if err != nil {
			return nil, nil, err
		}
		o.Transport = w.Job().Transport // auto's pick, for the report
		finish := func(ctx context.Context, timeout time.Duration) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return store.Barrier(ctx, w.Store(), job.Rank, job.Size, doneBarrier)
		}
		return w.Comm, finish, nil
	}
	comm, err := joinMPTCP(ctx, *o, job)
	noWait := func(context.Context, time.Duration) error { return nil } // TCP delivers what was sent
	return comm, noWait, err
}

// joinMPTCP connects the ranks with MPTCP, exchanging addresses through
// the store the job's parent serves.
func joinMPTCP(ctx context.Context, o Options, job launcher.Job) (*collective.Comm, error) {
	ctx, cancel := context.WithTimeout(ctx, job.ConnectTimeout)
	defer cancel()
	client, err := store.Dial(ctx, job.Store, store.ClientConfig{JobKey: job.JobKey})
	if err != nil {
		return nil, fmt.Errorf("rank %d: store at %s: %w", job.Rank, job.Store, err)
	}
	defer func() { _ = client.Close() }()
	l, err := tcp.Listen(ctx, tcp.Config{Rank: job.Rank, JobID: fnvHash(job.JobID), MultipathTCP: true})
	if err != nil {
		return nil, err
	}
	kv := store.Prefixed(client, "bench/"+job.JobID+"/")
	values, err := store.AllGather(ctx, kv, job.Rank, job.Size, "mptcp-addrs", []byte(l.Addr()))
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("rank %d: exchanging addresses: %w", job.Rank, err)
	}
	addrs := make([]string, len(values))
	for i, v := range values {
		addrs[i] = string(v)
	}
	ep, err := l.Connect(ctx, addrs)
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", job.Rank, err)
	}
	comm, err := collective.NewOwning(ep, 0, commConfig(o), ep)
	if err != nil {
		_ = ep.Close()
	}
	return comm, err
}
