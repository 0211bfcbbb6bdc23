//go:build unix

package main

import (
	"context"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher"
)

// SIGUSR1 to gocoll run, on a real job whose rank 2 never arrives at its
// fourth AllReduce: the launcher prints the job's hang report at once,
// every rank's answer in it, naming rank 2; the signal is not forwarded
// (the ranks go on waiting until --timeout ends the job). A report may
// miss ranks only where it waited the launcher's whole bound for them
// (launcher.DefaultDiagnoseWait: a rank left unscheduled that long on a
// loaded machine, as TestRunDiagnoseHealthyJob saw); the one naming rank
// 2 has all four.
func TestRunHangReportOnSIGUSR1(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j := startLoopJob(t, ctx, 4, "-np", "4", "--timeout", "8", "-x", "GOCOLL_STALL_TIMEOUT=60s",
		"--", bins.collcheck, "-mode", "hang", "-rank", "2", "-rounds", "3", "-count", "1024")
	// Rank 2 stops calling after its "looping" line, and the others enter
	// AllReduce #3 soon after: ask three times, a second apart (a loaded
	// machine may take a while), and look at the first report that finds
	// them there.
	var asked []time.Time
	for range 3 {
		time.Sleep(time.Second)
		asked = append(asked, time.Now())
		require.NoError(t, j.cmd.Process.Signal(syscall.SIGUSR1))
	}
	all, text, code := j.finish(t, ctx)
	require.Equal(t, 124, code, "SIGUSR1 ended the job; only --timeout should\n%s", text)
	const head = "gocoll: hang: rank 2 never arrived at AllReduce #3 (communicator 0x1), which the other ranks wait in"
	var rep []string
	reports := 0
	answered := regexp.MustCompile(`^gocoll run: hang report \(SIGUSR1\): (\d) of 4 ranks answered in (\S+)$`)
	for i := range all {
		m := answered.FindStringSubmatch(all[i].text)
		if m == nil {
			continue
		}
		if reports == 0 {
			t.Logf("first SIGUSR1 report %.3fs after the signal", all[i].at.Sub(asked[0]).Seconds())
			require.Less(t, all[i].at.Sub(asked[0]), 5*time.Second, text)
		}
		reports++
		if m[1] != "4" {
			took, err := time.ParseDuration(m[2])
			require.NoError(t, err)
			require.GreaterOrEqual(t, took, launcher.DefaultDiagnoseWait, "ranks missing before the wait ran out:\n%s", text)
			continue
		}
		if rep == nil && i+5 < len(all) && all[i+1].text == head {
			for _, l := range all[i : i+6] {
				rep = append(rep, l.text)
			}
		}
	}
	require.Equal(t, 3, reports, "one report per SIGUSR1:\n%s", text)
	require.NotNil(t, rep, "no SIGUSR1 report names rank 2:\n%s", text)
	require.Regexp(t, `^  rank 2: not in it; last: AllReduce #2 `, rep[4])
	for _, r := range []int{0, 1, 3} {
		require.Regexp(t, fmt.Sprintf(`^  rank %d: AllReduce #3 \(comm 0x1, rank %d of 4, `, r, r), rep[2+r])
	}
	require.Nil(t, firstMatch(all, `^\[rank \d\] .*(user defined signal|SIGUSR1)`), "a rank got SIGUSR1:\n%s", text)
}
