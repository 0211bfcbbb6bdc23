package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shrinkjob is the path of testdata/shrinkjob, built once.
var shrinkjob = sync.OnceValues(func() (string, error) {
	out := filepath.Join(bins.dir, "shrinkjob")
	b, err := exec.Command(goTool(), "build", "-o", out, "./testdata/shrinkjob").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: b}
	}
	return out, nil
})

var doneLine = regexp.MustCompile(`(?m)^\[rank (\d+)\] done size=(\d+) members=([\d,]+) resume=(-?\d+) checksum=(-?\d+) ok$`)

// wantChecksum recomputes, independently of the job, what shrinkjob's
// weights sum to: steps before resume summed every rank's gradients, the
// others only the members'. Gradient element i of rank r at step s is
// (r+1)(s+1) + i%7, over 1024 elements.
func wantChecksum(n, steps, resume int, members []int) int64 {
	var sum int64
	for s := range steps {
		for r := range n {
			if s >= resume && !slices.Contains(members, r) {
				continue
			}
			for i := range 1024 {
				sum += int64((r+1)*(s+1) + i%7)
			}
		}
	}
	return sum
}

// TestOnFailureContinueShrinks: under --on-failure continue, a 4-rank
// training job loses rank 2 (SIGKILL, at the start of step 15 of 40);
// ranks 0, 1 and 3 are not stopped: they shrink the world to 3 ranks,
// resume at the step they all agree on, and finish with the exact
// weights, and the exit status still reports rank 2's death. Over the
// default transport (shared memory within this host), TCP and MetaRoCE.
func TestOnFailureContinueShrinks(t *testing.T) {
	prog, err := shrinkjob()
	require.NoError(t, err)
	for _, tr := range []string{"auto", "tcp", "metaroce"} {
		t.Run(tr, func(t *testing.T) {
			o := gocollRun(t, 2*time.Minute, "-np", "4", "--on-failure", "continue",
				"-x", "GOCOLL_TRANSPORT="+tr, "-x", "GOCOLL_HEARTBEAT_TIMEOUT=2s", "--", prog, "-kill", "2", "-at", "15")
			require.Equal(t, 128+9, o.code, "the exit status reports rank 2's SIGKILL\nstdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
			require.Contains(t, o.stderr, "rank 2")
			done := doneLine.FindAllStringSubmatch(o.stdout, -1)
			var ranks []int
			for _, m := range done {
				r, _ := strconv.Atoi(m[1])
				ranks = append(ranks, r)
				require.Equal(t, "3", m[2], "rank %d", r)
				require.Equal(t, "0,1,3", m[3], "rank %d", r)
				resume, _ := strconv.Atoi(m[4])
				require.Equal(t, 15, resume, "rank %d: rank 2 died at the start of step 15", r)
				sum, _ := strconv.ParseInt(m[5], 10, 64)
				require.Equal(t, wantChecksum(4, 40, resume, []int{0, 1, 3}), sum, "rank %d", r)
			}
			slices.Sort(ranks)
			require.Equal(t, []int{0, 1, 3}, ranks, "every survivor finished\nstdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
			require.NotContains(t, o.stderr, "stopped:", "no survivor was stopped")
			t.Logf("took %v", o.took.Round(time.Millisecond))
		})
	}
}

// TestOnFailureFlag: an unknown policy is one line, exit status 2.
func TestOnFailureFlag(t *testing.T) {
	o := gocollRun(t, 30*time.Second, "-np", "2", "--on-failure", "retry", "--", "true")
	require.Equal(t, 2, o.code)
	require.Contains(t, o.stderr, `--on-failure "retry": want stop or continue`)
}
