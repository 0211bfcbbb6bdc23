//go:build unix

package job

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// roundsKey is the job key of these tests' nodes (--rdzv-id).
const roundsKey = "t7-rounds-shared-job-key-0123"

// freePort returns a TCP port free on 127.0.0.1 just now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// nodeSpec is node `node` of 2, 2 sh ranks each, meeting at ep.
func nodeSpec(node int, ep, script string, args ...string) (Spec, *syncBuffer) {
	s, _, errOut := shSpec(2, script, args...)
	s.NNodes, s.NodeRank, s.RdzvEndpoint, s.RdzvID = 2, node, ep, roundsKey
	s.JobID = ""
	return s, errOut
}

// runNodes runs both nodes' RunRestarting at once.
func runNodes(t *testing.T, specs ...Spec) []*Result {
	t.Helper()
	results := make([]*Result, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			results[i], errs[i] = RunRestarting(ctx, s)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "node %d", i)
	}
	return results
}

// Two nodes: rank 3 (node 1) is killed with SIGKILL in round 0 (once
// every rank has logged it) while node 0's ranks wait (as ranks wait in a collective for a dead peer); node 1
// asks for restart 1, node 0 stops its ranks and both start round 1, in
// which every rank sees count 1 and the job id of the round, and succeed.
func TestRoundsRestartBothNodes(t *testing.T) {
	dir := t.TempDir()
	ep := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	script := `echo "round $GOCOLL_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT rank $GOCOLL_RANK" >>"$1/log"
if [ "$GOCOLL_RESTART_COUNT" = 0 ]; then
	if [ "$GOCOLL_RANK" = 3 ]; then
		i=0; while [ "$(grep -c "round 0" "$1/log")" -lt 4 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
		kill -9 $$
	fi
	exec sleep 60
fi`
	s0, err0 := nodeSpec(0, ep, script, dir)
	s1, err1 := nodeSpec(1, ep, script, dir)
	s0.MaxRestarts, s1.MaxRestarts = 2, 2
	start := time.Now()
	res := runNodes(t, s0, s1)
	require.Less(t, time.Since(start), 50*time.Second, "node 0's ranks were stopped, not left to sleep")
	require.Equal(t, 0, res[0].ExitCode(), err0.String())
	require.Equal(t, 0, res[1].ExitCode(), err1.String())
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.Equal(t, []string{
		"round 0 0 rank 0", "round 0 0 rank 1", "round 0 0 rank 2", "round 0 0 rank 3",
		"round 1 1 rank 0", "round 1 1 rank 1", "round 1 1 rank 2", "round 1 1 rank 3",
	}, sortedLines(string(b)))
	require.Contains(t, err1.String(), "gocoll run: rank 3 on host thishost failed: killed by signal 9")
	require.Contains(t, err0.String(), "gocoll run: restart 1 asked for: node 1: rank 3 on host thishost failed: killed by signal 9 (killed)\n")
	for _, e := range []string{err0.String(), err1.String()} {
		require.Contains(t, e, "gocoll run: restarting the job (restart 1 of at most 2)\n")
		require.NotContains(t, e, "restart 2")
	}
}

// Out of restarts: rank 3 fails in every round; after restart 1 both
// nodes end, node 0 (whose ranks were stopped) saying why in one line.
func TestRoundsOutOfRestarts(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	script := `if [ "$GOCOLL_RANK" = 3 ]; then kill -9 $$; fi; exec sleep 60`
	s0, err0 := nodeSpec(0, ep, script)
	s1, err1 := nodeSpec(1, ep, script)
	s0.MaxRestarts, s1.MaxRestarts = 1, 1
	res := runNodes(t, s0, s1)
	require.Equal(t, 137, res[1].ExitCode(), err1.String())
	require.NotEqual(t, 0, res[0].ExitCode(), err0.String())
	const why = "the job failed: node 1: rank 3 on host thishost failed: killed by signal 9 (killed) (no restarts left)"
	for i, r := range res {
		require.Equal(t, why, r.NodeEnd, "node %d", i)
	}
	var b strings.Builder
	res[0].Report(&b)
	require.Equal(t, "gocoll run: "+why+"\n", b.String())
	require.Equal(t, 1, strings.Count(err0.String(), "restarting the job"), err0.String())
	require.Equal(t, 1, strings.Count(err1.String(), "restarting the job"), err1.String())
}

// fakeNode is node 1 of a job whose node 0 is under test, played through
// the store's keys: it dials node 0's store and sets keys as a node would.
func fakeNode(t *testing.T, ep, jobID string) store.Store {
	t.Helper()
	key, err := jobkey.Parse(roundsKey)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := store.Dial(ctx, ep, store.ClientConfig{JobKey: key, RetryMax: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return roundsStore(c, jobID)
}

// A node that does not come back for a restart: node 1 asks for restart 1
// and never starts it. Node 0 stops its round-0 ranks, starts round 1,
// and after --rdzv-timeout ends the job naming node 1, its ranks stopped.
func TestRoundsNodeDoesNotComeBack(t *testing.T) {
	dir := t.TempDir()
	ep := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s0, err0 := nodeSpec(0, ep, `echo "round $GOCOLL_RESTART_COUNT rank $GOCOLL_RANK" >>"$1/log"; exec sleep 60`, dir)
	s0.MaxRestarts, s0.RdzvTimeout = 3, time.Second
	spec, err := s0.withDefaults()
	require.NoError(t, err)
	done := make(chan *Result, 1)
	go func() {
		res, err := RunRestarting(context.Background(), s0)
		if err != nil {
			t.Errorf("node 0: %v", err)
		}
		done <- res
	}()
	kv := fakeNode(t, ep, spec.JobID)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, swapped, err := kv.CompareAndSet(ctx, "max", []byte("3"), []byte("3"))
	require.NoError(t, err)
	require.True(t, swapped, "node 0 set max 3")
	require.NoError(t, kv.Set(ctx, arriveKey(0, 1), nil))
	require.NoError(t, kv.Wait(ctx, arriveKey(0, 0)))
	for { // both of node 0's ranks run round 0
		b, _ := os.ReadFile(filepath.Join(dir, "log"))
		if strings.Count(string(b), "round 0") == 2 {
			break
		}
		require.NoError(t, ctx.Err(), "node 0's ranks did not start")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, kv.Set(ctx, restartKey(1), []byte("node 1: a test says so")))
	var res *Result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("node 0 did not end")
	}
	require.NotNil(t, res)
	require.Equal(t, "the job failed: node 1 did not come back for restart 1 within --rdzv-timeout 1s", res.NodeEnd)
	require.True(t, res.Superseded)
	require.NotEqual(t, 0, res.ExitCode())
	require.Contains(t, err0.String(), "gocoll run: restart 1 asked for: node 1: a test says so\n")
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.Equal(t, []string{"round 0 rank 0", "round 0 rank 1", "round 1 rank 0", "round 1 rank 1"}, sortedLines(string(b)))
}

// Nodes that disagree on --max-restarts: the later one refuses to start,
// in one line.
func TestRoundsMaxRestartsDisagree(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	key, err := jobkey.Parse(roundsKey)
	require.NoError(t, err)
	srv, err := store.Listen(context.Background(), ep, store.Config{JobKey: key})
	require.NoError(t, err)
	defer srv.Close()
	s1, _ := nodeSpec(1, ep, "true")
	s1.MaxRestarts = 1
	spec, err := s1.withDefaults()
	require.NoError(t, err)
	_, _, err = roundsStore(srv.Local(), spec.JobID).CompareAndSet(context.Background(), "max", nil, []byte("2"))
	require.NoError(t, err)
	_, err = RunRestarting(context.Background(), s1)
	require.EqualError(t, err, "--max-restarts 1, but another node of the job gives 2: every node must give the same")

	s1.RdzvID = "t7-another-shared-job-key-9999"
	_, err = RunRestarting(context.Background(), s1)
	require.ErrorContains(t, err, "node 0's store at "+ep+" refused this node's job key")
}

// Ctrl-C while a node dials node 0's store (nothing answers there) ends
// the dial at once, in one line naming the signal, instead of after
// --rdzv-timeout (a minute here).
func TestRoundsDialStoppedBySignal(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // no store there
	s, _ := nodeSpec(1, ep, `exit 0`)
	s.MaxRestarts, s.RdzvTimeout = 1, time.Minute
	sigs := make(chan os.Signal, 1)
	s.Signals = sigs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		time.Sleep(200 * time.Millisecond)
		sigs <- syscall.SIGINT
	}()
	_, err := RunRestarting(ctx, s)
	require.ErrorContains(t, err, "stopped by signal 2 (interrupt) while reaching node 0's store")
	require.NoError(t, ctx.Err(), "the dial outlived the signal")
}

// stopOn passes over signals that do not stop (SIGUSR2), ends its context
// at SIGTERM and reports it; with none, stop reports 0.
func TestStopOn(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, stop := stopOn(context.Background(), sigs)
	sigs <- syscall.SIGUSR2
	sigs <- syscall.SIGTERM
	<-ctx.Done()
	require.Equal(t, syscall.SIGTERM, stop())
	ctx, stop = stopOn(context.Background(), nil)
	require.NoError(t, ctx.Err())
	require.Zero(t, stop())
	require.Error(t, ctx.Err(), "stop ends the context")
}

// Node 0 forgets a round's keys once every node has started the next:
// its ranks' (under the round's job id) and the agreement's (arrive,
// done, restart); the next round's stay.
func TestForgetRound(t *testing.T) {
	ctx := context.Background()
	key, err := jobkey.Parse(roundsKey)
	require.NoError(t, err)
	srv, err := store.Listen(ctx, "127.0.0.1:0", store.Config{JobKey: key})
	require.NoError(t, err)
	defer srv.Close()
	s := Spec{NNodes: 2, JobID: "j"}
	r := &rounds{s: s, srv: srv, kv: roundsStore(srv.Local(), s.JobID)}
	for k := range 2 {
		require.NoError(t, launcher.JobStore(srv.Local(), roundSpec(s, k).JobID).Set(ctx, "rank/0", []byte("x")))
		for n := range 2 {
			require.NoError(t, r.kv.Set(ctx, arriveKey(k, n), nil))
			require.NoError(t, r.kv.Set(ctx, doneKey(k, n), nil))
		}
		require.NoError(t, r.kv.Set(ctx, restartKey(k), nil))
	}
	r.forgetRound(0)
	_, ok, err := launcher.JobStore(srv.Local(), roundSpec(s, 0).JobID).TryGet(ctx, "rank/0")
	require.NoError(t, err)
	require.False(t, ok, "round 0's rank key kept")
	_, ok, err = launcher.JobStore(srv.Local(), roundSpec(s, 1).JobID).TryGet(ctx, "rank/0")
	require.NoError(t, err)
	require.True(t, ok, "round 1's rank key forgotten")
	for k, want := range []bool{false, true} {
		keys := []string{restartKey(k)}
		for n := range 2 {
			keys = append(keys, arriveKey(k, n), doneKey(k, n))
		}
		for _, key := range keys {
			_, ok, err := r.kv.TryGet(ctx, key)
			require.NoError(t, err)
			require.Equal(t, want, ok, "round %d's %s", k, key)
		}
	}
}
