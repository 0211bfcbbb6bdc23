package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/job"
)

// EnvArgs is set, in every rank Main spawns, to Main's arguments as a JSON
// list of strings. The ranks are this same program started with this
// process's command line, which for gocoll leads back to Main with the same
// arguments; a host whose command line does not (a test binary) must call
// Main with the arguments in EnvArgs when it is set.
const EnvArgs = "GOCOLL_BENCH_ARGS"

// spawnGrace is how long the other ranks may run on after one rank failed
// before they are stopped.
const spawnGrace = 10 * time.Second

// rank0Prefix starts every line of rank 0's output that job.Run copies.
const rank0Prefix = "[rank 0] "

// spawnRanks starts o.localRanks() processes of this program on this host
// with gocoll run's engine (launcher/job: the store, the variables
// launcher.Init reads, the output, the stop of the others when one fails),
// and returns the job's exit status: rank 0's, or the first failed rank's.
// Rank 0's report reaches stdout without job's "[rank 0] " prefix; other
// output keeps its prefix.
func spawnRanks(ctx context.Context, o Options, args []string, stdout, stderr io.Writer) int {
	n := o.localRanks()
	p, err := newPlan(o, n)
	if err == nil {
		err = checkMemory(p, n, n)
	}
	if err != nil {
		return usageError(stderr, err)
	}
	transport := launcher.TransportAuto
	if o.Transport != "" && o.Transport != "mptcp" {
		transport = o.Transport
	}
	return spawnJob(ctx, n, transport, args, stdout, stderr)
}

// spawnJob starts n processes of this program on this host over the
// launcher's transport (the mptcp runs set it up themselves), to run Main
// with args, and returns the job's exit status, as spawnRanks says.
func spawnJob(ctx context.Context, n int, transport string, args []string, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		return runError(stderr, fmt.Errorf("finding this program to start the ranks: %w", err))
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return runError(stderr, err)
	}
	out := &prefixStripper{w: stdout, prefix: []byte(rank0Prefix)}
	// The end of ctx (Ctrl-C) reaches the ranks as gocoll run's would: a
	// forwarded SIGINT, which ends their ctx (gocoll's main) or kills them.
	sigs := make(chan os.Signal, 1)
	stopped := context.AfterFunc(ctx, func() { sigs <- syscall.SIGINT })
	defer stopped()
	res, err := job.Run(context.WithoutCancel(ctx), job.Spec{
		Program: exe, Args: os.Args[1:], NP: n, Grace: spawnGrace,
		Environ: append(launcher.Environ(), launcher.EnvTransport+"="+transport, EnvArgs+"="+string(argsJSON)),
		Stdout:  out, Stderr: stderr, Signals: sigs,
	})
	out.flush()
	if err != nil {
		return runError(stderr, fmt.Errorf("starting %d ranks: %w", n, err))
	}
	code := res.ExitCode()
	if res.First > 0 || code > ExitUsage {
		res.Report(stderr) // rank 0's own line explains the rest
	}
	if code != ExitOK && code != ExitUsage {
		code = ExitWrong
	}
	return code
}

// prefixStripper forwards whole lines to w, without prefix where a line
// starts with it.
type prefixStripper struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  []byte
	pending []byte // an incomplete last line
}

func (s *prefixStripper) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, p...)
	for {
		i := bytes.IndexByte(s.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimPrefix(s.pending[:i+1], s.prefix)
		if _, err := s.w.Write(line); err != nil {
			return len(p), err
		}
		s.pending = s.pending[i+1:]
	}
}

// flush forwards an incomplete last line.
func (s *prefixStripper) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		_, _ = s.w.Write(bytes.TrimPrefix(s.pending, s.prefix))
		s.pending = nil
	}
}

func fnvHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
