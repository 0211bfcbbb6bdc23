package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/transport/tcp"
)

// The environment that tells a process Main spawned which rank it is.
const (
	envRank  = "GOCOLL_BENCH_RANK"  // this process's rank
	envRanks = "GOCOLL_BENCH_RANKS" // the number of ranks
	envStore = "GOCOLL_BENCH_STORE" // host:port of the parent's rendezvous store
	envKey   = "GOCOLL_BENCH_KEY"   // the job key of that store
	envArgs  = "GOCOLL_BENCH_ARGS"  // the parent's arguments, a JSON list
)

// spawnGrace is how long the other ranks may run on after one rank failed
// before the parent kills them.
const spawnGrace = 10 * time.Second

// IsSpawnedRank reports whether this process is one rank of a benchmark
// that Main started. A program whose command line does not lead to Main
// when re-executed with the same arguments (a test binary, say) must call
// Main at once when it is true; Main then reads its arguments from the
// environment.
func IsSpawnedRank() bool { return os.Getenv(envRank) != "" }

// spawnJob is what a spawned rank learns from its environment.
type spawnJob struct {
	rank, ranks int
	store, key  string
	args        []string
}

// spawnedJob reads the spawn environment: ok is false if there is none.
func spawnedJob() (job spawnJob, ok bool, err error) {
	if !IsSpawnedRank() {
		return job, false, nil
	}
	job.rank, err = strconv.Atoi(os.Getenv(envRank))
	if err == nil {
		job.ranks, err = strconv.Atoi(os.Getenv(envRanks))
	}
	if err == nil {
		err = json.Unmarshal([]byte(os.Getenv(envArgs)), &job.args)
	}
	job.store, job.key = os.Getenv(envStore), os.Getenv(envKey)
	if err == nil && (job.ranks < 1 || job.ranks > RanksMax || job.rank < 0 || job.rank >= job.ranks || job.store == "" || job.key == "") {
		err = errors.New("incomplete spawn environment")
	}
	if err != nil {
		return job, true, fmt.Errorf("%s=%s: bad environment of a spawned rank: %w", envRank, os.Getenv(envRank), err)
	}
	return job, true, nil
}

// runSpawnedRank runs one spawned rank and returns its exit status.
func runSpawnedRank(ctx context.Context, job spawnJob, stdout, stderr io.Writer) int {
	o, err := ParseArgs(job.args)
	if err != nil {
		return usageError(stderr, err)
	}
	p, err := newPlan(o, job.ranks)
	if err != nil {
		return usageError(stderr, err)
	}
	comm, err := joinSpawned(ctx, job, o)
	if err != nil {
		return runError(stderr, fmt.Errorf("rank %d: %w", job.rank, err))
	}
	defer func() { _ = comm.Close() }()
	var rep reporter
	var prog io.Writer
	if job.rank == 0 {
		rep = newReporter(stdout, runInfo{opts: o, ranks: job.ranks, placement: "processes"})
		prog = stderr
	}
	wrong, err := runMember(ctx, comm, p, rep, prog)
	if err != nil {
		return runError(stderr, fmt.Errorf("rank %d: %w", job.rank, err))
	}
	return wrongStatus(wrong)
}

// joinSpawned connects this rank to the others: a TCP listener each, the
// addresses exchanged through the parent's store.
func joinSpawned(ctx context.Context, job spawnJob, o Options) (*collective.Comm, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	client, err := store.Dial(ctx, job.store, store.ClientConfig{JobKey: []byte(job.key)})
	if err != nil {
		return nil, err
	}
	defer func() { _ = client.Close() }()
	h := fnv.New64a()
	h.Write([]byte(job.key))
	l, err := tcp.Listen(ctx, tcp.Config{Rank: job.rank, JobID: h.Sum64(), MultipathTCP: o.Transport == "mptcp"})
	if err != nil {
		return nil, err
	}
	values, err := store.AllGather(ctx, client, job.rank, job.ranks, "bench/tcp-addrs", []byte(l.Addr()))
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	addrs := make([]string, len(values))
	for i, v := range values {
		addrs[i] = string(v)
	}
	ep, err := l.Connect(ctx, addrs)
	if err != nil {
		return nil, err
	}
	comm, err := collective.NewOwning(ep, 0, commConfig(o), ep)
	if err != nil {
		_ = ep.Close()
	}
	return comm, err
}

// spawnRanks starts o.Ranks processes of this program, one per rank, serves
// them a rendezvous store, waits for them all and returns rank 0's exit
// status (or ExitWrong if only another rank failed).
func spawnRanks(ctx context.Context, o Options, args []string, stdout, stderr io.Writer) int {
	p, err := newPlan(o, o.Ranks)
	if err == nil {
		err = checkMemory(p, o.Ranks, o.Ranks)
	}
	if err != nil {
		return usageError(stderr, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return runError(stderr, fmt.Errorf("finding this program to start the ranks: %w", err))
	}
	var keyBytes [16]byte
	_, _ = rand.Read(keyBytes[:])
	key := hex.EncodeToString(keyBytes[:])
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := store.Listen(ctx, "127.0.0.1:0", store.Config{JobKey: []byte(key)})
	if err != nil {
		return runError(stderr, err)
	}
	defer func() { _ = srv.Close() }()
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return runError(stderr, err)
	}
	env := append(os.Environ(), envRanks+"="+strconv.Itoa(o.Ranks), envStore+"="+srv.Addr().String(),
		envKey+"="+key, envArgs+"="+string(argsJSON))
	out, errOut := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	cmds := make([]*exec.Cmd, o.Ranks)
	for r := range cmds {
		cmd := exec.CommandContext(ctx, exe, os.Args[1:]...)
		cmd.Env = append(env[:len(env):len(env)], envRank+"="+strconv.Itoa(r))
		cmd.Stdout, cmd.Stderr = out, errOut
		cmd.WaitDelay = spawnGrace
		if err := cmd.Start(); err != nil {
			cancel()
			waitAll(cmds[:r])
			return runError(stderr, fmt.Errorf("starting rank %d: %w", r, err))
		}
		cmds[r] = cmd
	}
	return collectStatuses(cmds, cancel)
}

// collectStatuses waits for every rank. Once one fails, the others get
// spawnGrace to end on their own (their transport reports the lost peer)
// before cancel kills them. The result is rank 0's status, or ExitWrong if
// rank 0 succeeded but another did not.
func collectStatuses(cmds []*exec.Cmd, cancel context.CancelFunc) int {
	type exit struct{ rank, code int }
	exits := make(chan exit, len(cmds))
	for r, cmd := range cmds {
		go func() {
			err := cmd.Wait()
			code := 0
			if err != nil {
				code = ExitWrong
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() > 0 {
					code = ee.ExitCode()
				}
			}
			exits <- exit{r, code}
		}()
	}
	codes := make([]int, len(cmds))
	var grace <-chan time.Time
	for range cmds {
		var e exit
		select {
		case e = <-exits:
		case <-grace:
			cancel()
			e = <-exits
		}
		codes[e.rank] = e.code
		if e.code != 0 && grace == nil {
			grace = time.After(spawnGrace)
		}
	}
	for _, c := range codes[1:] {
		if codes[0] == ExitOK && c != ExitOK {
			return ExitWrong
		}
	}
	return codes[0]
}

// waitAll waits for started commands (after their context was cancelled).
func waitAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Wait()
	}
}

// lockedWriter serialises the writes of several ranks' output copiers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
