//go:build unix

package job

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// SIGUSR1 to the launcher prints a hang report and is not forwarded: the
// ranks (shell scripts here, which never answer) go on. Ranks that do
// not answer within DiagnoseWait are reported as such, with what the
// launcher knows of their process.
func TestRunSIGUSR1PrintsHangReport(t *testing.T) {
	s, out, errOut := shSpec(2, `trap 'echo got usr1' USR1; trap 'echo got int; exit 5' INT; echo ready; while :; do sleep 0.05; done`)
	s.DiagnoseWait = 200 * time.Millisecond
	sigs := make(chan os.Signal, 2)
	s.Signals = sigs
	go func() {
		for strings.Count(out.String(), "ready") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGUSR1
		for !strings.Contains(errOut.String(), "rank 1: did not answer") {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGINT
	}()
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 130, res.ExitCode())
	require.NotContains(t, out.String(), "got usr1")
	require.Equal(t, 2, strings.Count(out.String(), "got int"), out.String())
	report := errOut.String()
	require.Contains(t, report, "gocoll run: hang report (SIGUSR1): 0 of 2 ranks answered in ")
	require.Contains(t, report, "\n  rank 0: did not answer\n  rank 1: did not answer\n")
	require.NotNil(t, res.Hang)
	require.Equal(t, WhySignal, res.Hang.Why)
	require.GreaterOrEqual(t, res.Hang.Took, s.DiagnoseWait)
}

// --diagnose N prints a report every N while the job runs.
func TestRunDiagnoseEvery(t *testing.T) {
	s, _, errOut := shSpec(1, `i=0; while [ $i -lt 500 ] && [ ! -e "$1/stop" ]; do sleep 0.01; i=$((i+1)); done`, t.TempDir())
	s.DiagnoseEvery, s.DiagnoseWait = 50*time.Millisecond, 50*time.Millisecond
	dir := s.Args[len(s.Args)-1]
	go func() {
		for strings.Count(errOut.String(), "hang report (--diagnose)") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.WriteFile(dir+"/stop", nil, 0o644)
	}()
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	require.GreaterOrEqual(t, strings.Count(errOut.String(), "gocoll run: hang report (--diagnose): 0 of 1 ranks answered"), 2, errOut.String())
}

// The culprit is the rank the first failure names, if that rank did not
// fail on its own; the headline says why.
func TestCulprit(t *testing.T) {
	end := func(rank int, st syscall.WaitStatus, last string) RankEnd {
		pr := &proc{status: st}
		return RankEnd{Rank: rank, Host: "h", Status: st, Failed: st != 0, How: pr.describe(), Ended: time.Unix(1000, int64(rank)),
			Tail: []string{last}, Summary: last}
	}
	stopped := func(e RankEnd) RankEnd { e.Stopped, e.Failed = true, true; return e }
	frozen := func(e RankEnd) RankEnd { e.Frozen = true; return e }
	hang := &Hang{Diagnosis: collective.Diagnosis{Stuck: true, Culprit: 1, Reason: "never arrived", Comm: 1,
		Op: collective.OpRecord{Kind: collective.KindAllReduce, Seq: 7}, Headline: "gocoll: hang: rank 1 never arrived at AllReduce #7"}}
	cases := []struct {
		name     string
		res      Result
		culprit  int
		headline string
	}{
		{"stopped rank named by the first failure", Result{Ranks: []RankEnd{
			end(0, exitStatus(1), "gocoll: AllReduce on rank 0 of 3: with rank 2: rank 2: stopped answering: no heartbeat"),
			end(1, exitStatus(1), "gocoll: AllReduce on rank 1 of 3: with rank 2: rank 2: stopped answering: no heartbeat"),
			frozen(stopped(end(2, killedBy(syscall.SIGKILL), "looping"))),
		}}, 2, "gocoll run: rank 2 on host h held the job up: stopped answering: its process was stopped (SIGSTOP or a debugger)\n"},
		{"never-arriving rank of the hang report", Result{Hang: hang, Ranks: []RankEnd{
			end(0, exitStatus(1), "gocoll: AllReduce #7 on rank 0 of 2: deadline exceeded waiting for rank 1"),
			stopped(end(1, killedBy(syscall.SIGTERM), "")),
		}}, 1, "gocoll run: rank 1 on host h held the job up: never arrived in AllReduce #7 (communicator 0x1), in the hang report of "},
		{"stopped rank named after a rank that failed", Result{Ranks: []RankEnd{
			end(0, exitStatus(1), "gocoll: AllReduce on rank 0 of 4: with rank 2: rank 2: stopped answering: no heartbeat"),
			end(1, exitStatus(1), "gocoll: AllReduce on rank 1 of 4: with rank 3: rank 1: operation aborted: rank 2: stopped answering: no heartbeat"),
			frozen(stopped(end(2, killedBy(syscall.SIGKILL), "looping"))),
			end(3, exitStatus(1), "gocoll: AllReduce on rank 3 of 4: rank 1 failed: with rank 3: rank 2: stopped answering"),
		}}, 2, "gocoll run: rank 2 on host h held the job up: stopped answering: its process was stopped (SIGSTOP or a debugger)\n"},
		{"a rank that failed on its own is its own culprit", Result{Ranks: []RankEnd{
			end(0, exitStatus(3), "bad input on rank 0"),
			end(1, exitStatus(1), "with rank 0: reset"),
		}}, 0, "gocoll run: rank 0 on host h failed: exit status 3: bad input on rank 0\n"},
		{"killed rank", Result{Ranks: []RankEnd{
			end(0, exitStatus(1), "with rank 1: the rank's process exited"),
			end(1, killedBy(syscall.SIGKILL), "looping"),
		}}, 1, "gocoll run: rank 1 on host h failed: killed by signal 9 (killed): looping\n"},
		{"timeout", Result{TimedOut: true, Hang: hang, Ranks: []RankEnd{
			stopped(end(0, killedBy(syscall.SIGTERM), "")), stopped(end(1, killedBy(syscall.SIGTERM), "")),
		}}, 1, "gocoll run: job timed out after 0s: hang: rank 1 never arrived at AllReduce #7; stopped ranks rank 0 on h"},
		{"timeout without a report: the stopped rank", Result{TimedOut: true, Hang: &Hang{Err: errors.New("store gone")}, Ranks: []RankEnd{
			frozen(stopped(end(0, killedBy(syscall.SIGKILL), ""))), stopped(end(1, killedBy(syscall.SIGTERM), "")),
		}}, 0, "gocoll run: job timed out after 0s: rank 0 on host h stopped answering: its process was stopped (SIGSTOP or a debugger); stopped ranks "},
	}
	for _, c := range cases {
		c.res.First = firstFailure(c.res.Ranks)
		require.Equal(t, c.culprit, c.res.culprit(), c.name)
		var b strings.Builder
		c.res.Report(&b)
		require.True(t, strings.HasPrefix(b.String(), c.headline), "%s:\n%s", c.name, b.String())
	}
}
