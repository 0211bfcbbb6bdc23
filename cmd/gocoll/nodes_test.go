package main

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freeLoopbackPort returns a TCP port free on 127.0.0.1 just now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// torchrun's form: two launchers, started on their own, each with two
// ranks, meet at node 0's store on loopback and form one job of 4 ranks
// whose collectives check right. Node 1 names itself 127.0.0.1, so the
// two nodes are two hosts of the job. Node 1 starts first: its ranks wait
// for the store.
func TestTwoNodesOnLoopback(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	env := []string{"GOCOLL_JOB_KEY=h9-two-nodes-shared-key-0123"}
	outs := make([]outcome, 2)
	var wg sync.WaitGroup
	for node, host := range []string{"localhost", "127.0.0.1"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if node == 0 {
				time.Sleep(200 * time.Millisecond) // not a synchronisation: either order works
			}
			outs[node] = runFor(t, 2*time.Minute, env, bins.gocoll, "run", "--nnodes", "2", "--node-rank", fmt.Sprint(node),
				"--nproc-per-node", "2", "--rdzv-endpoint", ep, "-H", host+":2", "--", bins.collcheck)
		}()
	}
	wg.Wait()
	all := map[int]okReport{}
	for node, o := range outs {
		require.Equal(t, 0, o.code, "node %d\nstdout:\n%s\nstderr:\n%s", node, o.stdout, o.stderr)
		for r, rep := range okLines(t, o.stdout) {
			require.Equal(t, 4, rep.size)
			require.Equal(t, node, r/2, "node %d runs ranks %d and %d", node, 2*node, 2*node+1)
			require.Equal(t, r%2, rep.local)
			require.Equal(t, []string{"localhost", "127.0.0.1"}[node], rep.host)
			all[r] = rep
		}
	}
	require.Len(t, all, 4)
}

// --max-restarts through gocoll run: rank 1 of the first run is killed
// with SIGKILL; the whole job starts again and the second run passes.
func TestMaxRestartsAfterKill9(t *testing.T) {
	script := `if [ "$GOCOLL_RESTART_COUNT" = 0 ] && [ "$GOCOLL_RANK" = 1 ]; then kill -9 $$; fi; exec "$0"`
	o := gocollRun(t, 2*time.Minute, "-np", "2", "--max-restarts", "3", "--", "/bin/sh", "-c", script, bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Len(t, okLines(t, o.stdout), 2)
	require.Contains(t, o.stderr, "killed by signal 9")
	require.Contains(t, o.stderr, "gocoll run: restarting the job (restart 1 of at most 3)\n")
	require.NotContains(t, o.stderr, "restart 2 of")
}

// A hang report of a job of two nodes asks every rank of the job, not
// only the launcher's own: node 0's, at its --timeout, names rank 2 (on
// node 1), which never arrived at AllReduce #3.
func TestTwoNodesHangReport(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	env := []string{"GOCOLL_JOB_KEY=h9-two-nodes-shared-key-0123"}
	outs := make([]outcome, 2)
	var wg sync.WaitGroup
	for node, host := range []string{"localhost", "127.0.0.1"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			timeout := []string{"5", "60"}[node] // node 1's ranks end when node 0's are stopped
			outs[node] = runFor(t, 2*time.Minute, env, bins.gocoll, "run", "--timeout", timeout, "--nnodes", "2",
				"--node-rank", fmt.Sprint(node), "--nproc-per-node", "2", "--rdzv-endpoint", ep, "-H", host+":2", "--",
				bins.collcheck, "-mode", "hang", "-rank", "2", "-rounds", "3", "-count", "1024")
		}()
	}
	wg.Wait()
	require.Equal(t, 124, outs[0].code, outs[0].stderr)
	require.Contains(t, outs[0].stderr, "gocoll run: hang report (--timeout): 4 of 4 ranks answered")
	require.Contains(t, outs[0].stderr, "gocoll: hang: rank 2 never arrived at AllReduce #3")
	require.NotEqual(t, 0, outs[1].code, outs[1].stderr)
}
