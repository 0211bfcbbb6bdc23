package job

import (
	"context"
	"fmt"
	"strconv"
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
func RunRestarting(ctx context.Context, s Spec) (*Result, error) {
	if s.MaxRestarts < 0 || s.MaxRestarts > MaxRestarts {
		return nil, fmt.Errorf("--max-restarts %d: want 0 to %d", s.MaxRestarts, MaxRestarts)
	}
	if s.MaxRestarts > 0 && s.NNodes > 1 {
		// Each node would restart on its own failures alone, while the
		// others' ranks still wait in the old run: the nodes must agree on
		// each restart (torchrun's rendezvous rounds), which they do not yet.
		return nil, fmt.Errorf("--max-restarts with --nnodes %d: not supported yet (the nodes do not agree on restarts)", s.NNodes)
	}
	base, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	for restart := 0; ; restart++ {
		run := base
		run.Export = append(append([]string(nil), base.Export...), // local and remote ranks
			EnvRestartCount+"="+strconv.Itoa(restart), EnvTorchRestartCount+"="+strconv.Itoa(restart))
		if restart > 0 {
			run.JobID = base.JobID + "-r" + strconv.Itoa(restart)
		}
		res, err := Run(ctx, run)
		if err != nil || res.ExitCode() == 0 || res.TimedOut || res.Interrupted != 0 || ctx.Err() != nil || restart == base.MaxRestarts {
			return res, err
		}
		res.Report(base.Stderr)
		fmt.Fprintf(base.Stderr, "gocoll run: restarting the job (restart %d of at most %d)\n", restart+1, base.MaxRestarts)
	}
}
