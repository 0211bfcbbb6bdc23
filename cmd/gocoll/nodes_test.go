package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
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
	outs := runTwoNodesEach(t, 200*time.Millisecond, [2][]string{}, bins.collcheck)
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
	// node 1's ranks end when node 0's are stopped
	outs := runTwoNodesEach(t, 0, [2][]string{{"--timeout", "5", "--diagnose-wait", "20"}, {"--timeout", "60"}},
		bins.collcheck, "-mode", "hang", "-rank", "2", "-rounds", "3", "-count", "1024")
	require.Equal(t, 124, outs[0].code, outs[0].stderr)
	require.Contains(t, outs[0].stderr, "gocoll run: hang report (--timeout): 4 of 4 ranks answered")
	require.Contains(t, outs[0].stderr, "gocoll: hang: rank 2 never arrived at AllReduce #3")
	require.NotEqual(t, 0, outs[1].code, outs[1].stderr)
}

// runTwoNodes runs node 0 and node 1 of a job of 2 nodes x 2 ranks on
// loopback (node 1 names itself 127.0.0.1) with args before --, and
// returns their outcomes.
func runTwoNodes(t *testing.T, args []string, program ...string) []outcome {
	t.Helper()
	return runTwoNodesEach(t, 0, [2][]string{args, args}, program...)
}

// runTwoNodesEach is runTwoNodes with each node's own args, node 0
// starting node0Delay after node 1 (not a synchronisation: either order
// works).
func runTwoNodesEach(t *testing.T, node0Delay time.Duration, args [2][]string, program ...string) []outcome {
	t.Helper()
	ep := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	env := []string{"GOCOLL_JOB_KEY=t7-two-nodes-restart-key-0123"}
	outs := make([]outcome, 2)
	var wg sync.WaitGroup
	for node, host := range []string{"localhost", "127.0.0.1"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if node == 0 {
				time.Sleep(node0Delay)
			}
			argv := append([]string{bins.gocoll, "run", "--nnodes", "2", "--node-rank", fmt.Sprint(node),
				"--nproc-per-node", "2", "--rdzv-endpoint", ep, "-H", host + ":2"}, args[node]...)
			outs[node] = runFor(t, 2*time.Minute, env, append(append(argv, "--"), program...)...)
		}()
	}
	wg.Wait()
	return outs
}

// --max-restarts across nodes: rank 3 (node 1) is killed with SIGKILL in
// round 0 while the others wait for it to join; both nodes start round 1,
// where every rank sees GOCOLL_RESTART_COUNT=1 and the job's collectives
// check right, and both exit 0.
func TestMaxRestartsTwoNodesAfterKill9(t *testing.T) {
	script := `echo "rank $GOCOLL_RANK restart $GOCOLL_RESTART_COUNT"
if [ "$GOCOLL_RESTART_COUNT" = 0 ] && [ "$GOCOLL_RANK" = 3 ]; then kill -9 $$; fi; exec "$0"`
	outs := runTwoNodes(t, []string{"--max-restarts", "2"}, "/bin/sh", "-c", script, bins.collcheck)
	for node, o := range outs {
		require.Equal(t, 0, o.code, "node %d\nstdout:\n%s\nstderr:\n%s", node, o.stdout, o.stderr)
		oks := okLines(t, o.stdout)
		require.Len(t, oks, 2, "node %d: %s", node, o.stdout)
		for r := 2 * node; r < 2*node+2; r++ {
			require.Equal(t, 4, oks[r].size)
			require.Contains(t, o.stdout, fmt.Sprintf("[rank %d] rank %d restart 1\n", r, r))
		}
		require.Contains(t, o.stderr, "gocoll run: restarting the job (restart 1 of at most 2)\n")
		require.NotContains(t, o.stderr, "restart 2 of")
	}
	require.Contains(t, outs[1].stderr, "gocoll run: rank 3 on host 127.0.0.1 failed: killed by signal 9")
	require.Contains(t, outs[0].stderr, "gocoll run: restart 1 asked for: node 1: rank 3 on host 127.0.0.1 failed: killed by signal 9 (killed)")
}

// The bound exhausted: rank 3 is killed in every round; after its one
// restart the job ends on both nodes, non-zero, node 0 saying why.
func TestMaxRestartsTwoNodesExhausted(t *testing.T) {
	script := `if [ "$GOCOLL_RANK" = 3 ]; then kill -9 $$; fi; exec "$0"`
	outs := runTwoNodes(t, []string{"--max-restarts", "1"}, "/bin/sh", "-c", script, bins.collcheck)
	require.Equal(t, 137, outs[1].code, outs[1].stderr)
	require.NotEqual(t, 0, outs[0].code, outs[0].stderr)
	why := "gocoll run: the job failed: node 1: rank 3 on host 127.0.0.1 failed: killed by signal 9 (killed) (no restarts left)\n"
	for node, o := range outs {
		require.Contains(t, o.stderr, why, "node %d", node)
		require.Equal(t, 1, strings.Count(o.stderr, "restarting the job"), "node %d: %s", node, o.stderr)
		require.Empty(t, okLines(t, o.stdout))
	}
}

// A node that does not come back: node 1's launcher is killed (SIGKILL,
// its ranks with it) while the job loops over AllReduce; node 0's ranks
// fail, node 0 asks for restart 1 and, node 1 never arriving, ends the job
// after --rdzv-timeout, in one line naming node 1.
func TestMaxRestartsTwoNodesNodeGone(t *testing.T) {
	ep := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	env := append(os.Environ(), "GOCOLL_JOB_KEY=t7-two-nodes-restart-key-0123")
	argv := func(node int, host string) []string {
		return []string{"run", "--nnodes", "2", "--node-rank", fmt.Sprint(node), "--nproc-per-node", "2",
			"--rdzv-endpoint", ep, "-H", host + ":2", "--max-restarts", "2", "--rdzv-timeout", "3",
			"--", bins.collcheck, "-mode", "loop", "-count", "1024"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node1 := exec.CommandContext(ctx, bins.gocoll, argv(1, "127.0.0.1")...)
	node1.Env = env
	out1, err := node1.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, node1.Start())
	done := make(chan outcome, 1)
	go func() {
		done <- runFor(t, 2*time.Minute, env[len(env)-1:], append([]string{bins.gocoll}, argv(0, "localhost")...)...)
	}()
	sc := bufio.NewScanner(out1)
	looping := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "looping pid=") {
			looping = true
			break
		}
	}
	require.True(t, looping, "node 1's ranks never looped")
	require.NoError(t, node1.Process.Kill())
	_ = node1.Wait()
	o := <-done
	require.NotEqual(t, 0, o.code, o.stderr)
	require.Contains(t, o.stderr, "gocoll run: restarting the job (restart 1 of at most 2)\n")
	require.Contains(t, o.stderr, "gocoll run: the job failed: node 1 did not come back for restart 1 within --rdzv-timeout 3s\n")
}

// The link figures survive a restart across nodes too: the two nodes'
// hosts differ, so round 0 probes as the world forms; rank 3 then fails,
// and round 1 takes the figures node 0's launcher read from the job's
// store (GOCOLL_LINKS) without probing again.
func TestMaxRestartsTwoNodesKeepLinks(t *testing.T) {
	script := `"$0" "$@" >/dev/null || exit; if [ "$GOCOLL_RESTART_COUNT" = 0 ] && [ "$GOCOLL_RANK" = 3 ]; then exit 3; fi`
	outs := runTwoNodes(t, []string{"--max-restarts", "1", "-x", "GOCOLL_DEBUG=info"}, "/bin/sh", "-c", script, bins.gocoll, "topo", "--dump")
	for node, o := range outs {
		require.Equal(t, 0, o.code, "node %d\nstdout:\n%s\nstderr:\n%s", node, o.stdout, o.stderr)
	}
	first, again, ok := strings.Cut(outs[0].stderr, "restarting the job")
	require.True(t, ok, outs[0].stderr)
	require.Contains(t, first, `msg="gocoll: link figures" rank=0 host="`, first)
	require.Contains(t, first, "(probe)")
	require.Contains(t, again, `msg="gocoll: link figures" rank=0 host="`, again)
	require.Contains(t, again, "(cache)")
	require.NotContains(t, again, "(probe)")
}
