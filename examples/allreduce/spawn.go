package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/job"
)

// spawn starts cfg.ranks processes of self on this host with gocoll run's
// engine (launcher/job: the store, the variables gocoll.Init reads, the
// output, the stop of the others when one fails) and returns the job's exit
// status. The ranks' lines go out without "[rank N] ": only rank 0 prints,
// and every error line names its rank. Ctrl-C reaches the ranks, whose
// collectives end.
func spawn(ctx context.Context, cfg config, self program, stdout, stderr io.Writer) int {
	env := append(launcher.Environ(), self.env...)
	if cfg.transport != "" {
		env = append(env, launcher.EnvTransport+"="+cfg.transport)
	}
	caught := make(chan os.Signal, 2)
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(caught)
	forward := make(chan os.Signal, 2)
	var interrupted atomic.Bool
	go func() {
		for sig := range caught {
			interrupted.Store(true)
			forward <- sig
		}
	}()
	res, err := job.Run(ctx, job.Spec{
		Program: self.path, Args: self.args, NP: cfg.ranks, Environ: env,
		Untagged: true, Stdout: stdout, Stderr: stderr, Signals: forward,
	})
	if err != nil {
		fmt.Fprintf(stderr, "allreduce: starting %d ranks: %v\n", cfg.ranks, err)
		return 1
	}
	switch code := res.ExitCode(); {
	case code == 0:
		return 0
	case interrupted.Load():
		return exitInterrupted // rank 0 said so
	default:
		res.Report(stderr)
		return 1
	}
}
