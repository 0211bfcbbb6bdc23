//go:build unix

package job

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// A node's ranks get the job's ranks and size, the endpoint as the store
// (node 0 serves it: not this node), and the job id every node derives
// from the shared key.
func TestNodeRankVars(t *testing.T) {
	ids := map[string]bool{}
	for _, key := range []string{"GOCOLL_JOB_KEY=h9-a-shared-key-of-the-nodes", ""} {
		s, out, errOut := shSpec(2, `echo "$GOCOLL_RANK/$GOCOLL_WORLD_SIZE local=$GOCOLL_LOCAL_RANK store=$GOCOLL_STORE serve=$GOCOLL_STORE_SERVE host=$GOCOLL_HOST job=$GOCOLL_JOB_ID"`)
		s.JobID = ""
		s.NNodes, s.NodeRank, s.RdzvEndpoint = 3, 1, "127.0.0.1:29400"
		s.Hosts = []topology.HostSlots{{Host: "127.0.0.1", Slots: 1}}
		if key != "" {
			s.Environ = append(s.Environ, key)
		} else {
			s.RdzvID = "h9-rendezvous-id-as-key"
		}
		res, err := Run(context.Background(), s)
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode(), errOut.String())
		lines := sortedLines(out.String())
		require.Len(t, lines, 2)
		job := lines[0][strings.LastIndex(lines[0], "job=")+4:]
		require.Regexp(t, `^node-job-[0-9a-f]{16}$`, job)
		ids[job] = true
		require.Equal(t, []string{
			"[rank 2] 2/6 local=0 store=127.0.0.1:29400 serve=0 host=127.0.0.1 job=" + job,
			"[rank 3] 3/6 local=1 store=127.0.0.1:29400 serve=0 host=127.0.0.1 job=" + job,
		}, lines)
	}
	require.Len(t, ids, 2, "another key, another job id")
}

func TestNodeSpecErrors(t *testing.T) {
	for _, c := range []struct {
		nnodes, nodeRank int
		ep, id, err      string
	}{
		{2, 2, "127.0.0.1:1", "", "--node-rank 2: want 0 to 1 (--nnodes 2)"},
		{2, 0, "", "", "--nnodes 2: give --rdzv-endpoint HOST:PORT, where node 0 serves the store"},
		{2, 0, "nohostport", "", `--rdzv-endpoint "nohostport": want HOST:PORT`},
		{2, 0, "h:0", "", `--rdzv-endpoint "h:0": port "0" is not in [1, 65535]`},
		{2, 0, "h:1", "", "--nnodes: the nodes need one job key: set GOCOLL_JOB_KEY (the same on every node) or --rdzv-id"},
		{2, 0, "h:1", "short", "--rdzv-id serves as the job key without GOCOLL_JOB_KEY: "},
		{0, 1, "", "", "--node-rank, --rdzv-endpoint and --rdzv-id need --nnodes"},
		{-1, 0, "", "", "--nnodes -1: want 1 to "},
	} {
		s, _, _ := shSpec(2, "true")
		s.NNodes, s.NodeRank, s.RdzvEndpoint, s.RdzvID = c.nnodes, c.nodeRank, c.ep, c.id
		_, err := Run(context.Background(), s)
		require.ErrorContains(t, err, c.err, "%+v", c)
		require.NotContains(t, err.Error(), "\n")
	}
}

// --max-restarts: rank 1 kills itself (SIGKILL) on the first two runs;
// the third, restart 2, succeeds. Every run's ranks see its count.
func TestRunRestartingAfterKill(t *testing.T) {
	dir := t.TempDir()
	s, out, errOut := shSpec(2, `echo "run $GOCOLL_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT rank $GOCOLL_RANK job $GOCOLL_JOB_ID" >>"$1/log"
if [ "$GOCOLL_RANK" = 1 ] && [ "$GOCOLL_RESTART_COUNT" -lt 2 ]; then kill -9 $$; fi`, dir)
	s.MaxRestarts = 2
	res, err := RunRestarting(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode(), errOut.String())
	require.Empty(t, out.String())
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.Equal(t, []string{
		"run 0 0 rank 0 job testjob", "run 0 0 rank 1 job testjob",
		"run 1 1 rank 0 job testjob-r1", "run 1 1 rank 1 job testjob-r1",
		"run 2 2 rank 0 job testjob-r2", "run 2 2 rank 1 job testjob-r2",
	}, sortedLines(string(b)))
	require.Equal(t, 2, strings.Count(errOut.String(), "killed by signal 9"), errOut.String())
	require.Contains(t, errOut.String(), "gocoll run: restarting the job (restart 1 of at most 2)\n")
	require.Contains(t, errOut.String(), "gocoll run: restarting the job (restart 2 of at most 2)\n")

	// Out of restarts: the last run's failure is the result.
	s, _, errOut = shSpec(1, `kill -9 $$`)
	s.MaxRestarts = 1
	res, err = RunRestarting(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 137, res.ExitCode())
	require.Equal(t, 1, strings.Count(errOut.String(), "restarting the job"), errOut.String())

	s.MaxRestarts = -1
	_, err = RunRestarting(context.Background(), s)
	require.EqualError(t, err, "--max-restarts -1: want 0 to 1000")
	s.MaxRestarts, s.RdzvTimeout = 1, -time.Second
	_, err = RunRestarting(context.Background(), s)
	require.EqualError(t, err, "--rdzv-timeout -1s: want (0, 24h0m0s]")
}
