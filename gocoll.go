// Package gocoll is the entry point of a gocoll program: [Init] joins the
// job the process was started in (by gocoll run, mpirun, srun, torchrun or
// by hand) and returns the world communicator.
//
//	world, err := gocoll.Init(ctx)
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer world.Close()
//	err = collective.AllReduce(ctx, world.Comm, grad, grad, collective.Avg)
//
// The collectives are in package collective; the environment variables,
// the rendezvous and the health checks are described in package launcher.
package gocoll

import (
	"context"
	"strings"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/transport"
)

// World is a process's membership of a job: the world communicator
// (embedded) and where every rank runs. See [launcher.World].
type World = launcher.World

// Options adjust InitWith; see [launcher.Options].
type Options = launcher.Options

// Stats is a snapshot of a rank's traffic with each peer, and per path on
// MetaRoCE: what World.Stats returns. See [transport.Stats].
type Stats = transport.Stats

// Init builds the world communicator from the environment: gocoll's own
// variables, or Open MPI's, Slurm's or torchrun's. Without any of them it
// returns an error saying what to set. See [launcher.Init].
//
// Init installs no signal handler. gocoll run forwards SIGINT, SIGTERM
// and SIGHUP to every rank, and by Go's default a rank then exits at
// once. A program that should end cleanly instead (its pending
// collectives failing with their context's error, its own cleanup run)
// passes them a context from [os/signal.NotifyContext], as
// examples/allreduce does.
func Init(ctx context.Context) (*World, error) {
	return launcher.Init(ctx, launcher.Options{})
}

// InitWith is Init with options: a collective configuration, or an explicit
// environment for ranks that are goroutines of one process.
func InitWith(ctx context.Context, opts Options) (*World, error) {
	return launcher.Init(ctx, opts)
}

// Launched reports whether a launcher started this process: whether the
// variables of gocoll run, mpirun, srun or torchrun (or GOCOLL_RANK) are
// set, so that Init has a job to join. A program started by hand can then
// start its own ranks instead, as examples/allreduce does. Launched does
// not check the values; Init does.
func Launched() bool {
	_, err := launcher.ReadEnv()
	return err == nil || !strings.HasPrefix(err.Error(), noLauncherPrefix)
}

// noLauncherPrefix starts launcher.ReadEnv's error when no launcher's
// variables are set at all.
const noLauncherPrefix = "gocoll: no launcher environment"
