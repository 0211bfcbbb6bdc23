package job

import (
	"context"
	"fmt"
)

// Variables a restarted job's ranks find their restart count in (0 on the
// first run), gocoll's and torchrun's names, so that a program can resume
// from its checkpoint.
const (
	EnvRestartCount      = "GOCOLL_RESTART_COUNT"
	EnvTorchRestartCount = "TORCHELASTIC_RESTART_COUNT"
)

// MaxRestarts bounds Spec.MaxRestarts.
const MaxRestarts = 1000

// RunRestarting runs s as Run does, and, while a run fails (a rank's
// failure, not a timeout or a stopping signal) and fewer than
// s.MaxRestarts restarts have been made, starts the whole job again from
// the program's start, as torchrun --max-restarts: every rank, with
// EnvRestartCount and EnvTorchRestartCount set to the restart's number,
// under a job id of its own (the job's, then "-r1", "-r2"...). Before a
// restart it writes the failed run's report and one line saying so to
// s.Stderr. It returns the last run's Result.
//
// In a job of several nodes (NNodes above 1) the nodes agree on each
// restart, as torchrun's rendezvous rounds: a node whose ranks fail asks
// for the next round in the job's store (node 0's launcher serves it at
// RdzvEndpoint for every round); every node then stops its ranks, if they
// still run, and starts them again for that round, with the count in
// their environment. A node whose ranks succeeded waits for every other
// node's to end. A failure after MaxRestarts restarts, a timeout, a
// stopping signal, or a node that does not come back for a restart (or
// end) within RdzvTimeout ends the job on every node, each saying why in
// one line (Result.NodeEnd). Every node must give the same MaxRestarts.
func RunRestarting(ctx context.Context, s Spec) (*Result, error) {
	if s.MaxRestarts < 0 || s.MaxRestarts > MaxRestarts {
		return nil, fmt.Errorf("--max-restarts %d: want 0 to %d", s.MaxRestarts, MaxRestarts)
	}
	base, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	if base.MaxRestarts > 0 && base.NNodes > 1 {
		return runRounds(ctx, base)
	}
	for restart := 0; ; restart++ {
		res, err := Run(ctx, roundSpec(base, restart))
		if err != nil || res.ExitCode() == 0 || res.TimedOut || res.Interrupted != 0 || ctx.Err() != nil || restart == base.MaxRestarts {
			return res, err
		}
		res.Report(base.Stderr)
		base = withLinks(base, res.Links)
		fmt.Fprintf(base.Stderr, "gocoll run: restarting the job (restart %d of at most %d)\n", restart+1, base.MaxRestarts)
	}
}
