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

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// EnvArgs is set, in every rank Main spawns, to Main's arguments as a JSON
// list of strings. The ranks are this same program started with this
// process's command line, which for gocoll leads back to Main with the same
// arguments; a host whose command line does not (a test binary) must call
// Main with the arguments in EnvArgs when it is set.
const EnvArgs = "GOCOLL_BENCH_ARGS"

// spawnGrace is how long the other ranks may run on after one rank failed
// before the parent kills them.
const spawnGrace = 10 * time.Second

// spawnRanks starts o.localRanks() processes of this program, one per rank,
// with the variables launcher.Init reads (gocoll's: GOCOLL_RANK,
// GOCOLL_WORLD_SIZE, ...), serves them the rendezvous store, waits for
// them all and returns rank 0's exit status (ExitWrong if only another
// rank failed).
func spawnRanks(ctx context.Context, o Options, args []string, stdout, stderr io.Writer) int {
	n := o.localRanks()
	p, err := newPlan(o, n)
	if err == nil {
		err = checkMemory(p, n, n)
	}
	if err != nil {
		return usageError(stderr, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return runError(stderr, fmt.Errorf("finding this program to start the ranks: %w", err))
	}
	var secret [16]byte
	_, _ = rand.Read(secret[:])
	key := hex.EncodeToString(secret[:])
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := store.Listen(ctx, "127.0.0.1:0", store.Config{JobKey: []byte(key)})
	if err != nil {
		return runError(stderr, err)
	}
	defer func() { _ = srv.Close() }()
	env, err := spawnEnv(o, n, srv.Addr().String(), key, args)
	if err != nil {
		return runError(stderr, err)
	}
	out, errOut := &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	cmds := make([]*exec.Cmd, n)
	for r := range cmds {
		cmd := exec.CommandContext(ctx, exe, os.Args[1:]...)
		cmd.Env = append(env[:len(env):len(env)], launcher.EnvRank+"="+strconv.Itoa(r), launcher.EnvLocalRank+"="+strconv.Itoa(r))
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

// spawnEnv is the environment every spawned rank shares: this process's,
// plus the job's variables and the arguments.
func spawnEnv(o Options, n int, storeAddr, key string, args []string) ([]string, error) {
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	transport := launcher.TransportTCP
	if o.Transport != "" && o.Transport != "mptcp" {
		transport = o.Transport
	}
	return append(launcher.Environ(),
		launcher.EnvWorldSize+"="+strconv.Itoa(n),
		launcher.EnvStore+"="+storeAddr,
		launcher.EnvStoreServe+"=0",
		launcher.EnvJobKey+"="+key,
		launcher.EnvJobID+"=bench-"+key[:12],
		launcher.EnvTransport+"="+transport,
		EnvArgs+"="+string(argsJSON)), nil
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
			code := ExitOK
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
		if e.code != ExitOK && grace == nil {
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

func fnvHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
