//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
)

// Two lab hosts, two ranks each, over the default transport (MetaRoCE
// between the hosts): every path between them cut silently in the middle
// of AllReduce. Every rank's error names a rank of the other host within
// GOCOLL_PEER_TIMEOUT (and slack), long before the store heartbeat's 30 s.
func TestRunLabPathsCutNamedByPeerTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the peer timeout in a lab: not in -short")
	}
	const peerTimeout, slack = 2 * time.Second, 6 * time.Second
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 2})
	hostfile := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(hostfile, []byte(l.Hostfile(2)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j := startLoopJob(t, ctx, 4, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"--", bins.collcheck, "-mode", "loop", "-count", "4096")
	cut := time.Now()
	for _, p := range l.Paths() {
		require.NoError(t, l.Cut(ctx, p, true), "cut %v", p)
	}
	t.Logf("both paths cut in %v", time.Since(cut).Round(time.Millisecond))
	var all []stampedLine
	for line := range j.lines {
		all = append(all, line)
	}
	err := j.cmd.Wait()
	require.NoError(t, ctx.Err(), "the job did not end within a minute")
	require.Error(t, err)
	for r := range 4 {
		found, text := firstError(all, r, cut)
		require.NotNil(t, found, "rank %d printed no error:\n%s", r, text)
		other := 2 * (1 - r/2) // the first rank of the other host
		require.Regexp(t, fmt.Sprintf(`rank (%d|%d)\b.*stopped answering`, other, other+1), found.text, "rank %d:\n%s", r, text)
		took := found.at.Sub(cut)
		require.Less(t, took, peerTimeout+slack, "rank %d named its peer too late:\n%s", r, text)
		t.Logf("rank %d named its peer %.2fs after the cut: %s", r, took.Seconds(), found.text)
	}
}

// Loss is no silence: two lab hosts, two ranks each, 5 % loss on both
// paths each way, AllReduce in a loop over the default transport for 30 s
// (the launcher's --timeout then stops the job): no rank reports an error,
// though MetaRoCE's peer timeout (2 s) is far shorter than the run.
func TestRunLabLossNoFalseAlarm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 30 s in a lab: not in -short")
	}
	const run = 30 * time.Second
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 1, Paths: 2, LossPct: 5})
	hostfile := filepath.Join(t.TempDir(), "hostfile")
	require.NoError(t, os.WriteFile(hostfile, []byte(l.Hostfile(2)), 0o644))
	// The paths' counters halfway through and at the end show that the
	// second half moved data too, through the loss.
	mid := make(chan [2]uint64, 1)
	timer := time.AfterFunc(run/2, func() { mid <- labTotals(t, l) })
	defer timer.Stop()
	o := gocollRun(t, run+time.Minute, "--hostfile", hostfile, "--rsh", "ip netns exec {host}",
		"--timeout", run.String(), "--", bins.collcheck, "-mode", "loop", "-count", "65536")
	end, half := labTotals(t, l), <-mid
	t.Logf("paths: %d bytes and %d drops halfway, %d and %d at the end", half[0], half[1], end[0], end[1])
	require.Greater(t, end[0]-half[0], uint64(1<<20), "the second half moved little")
	require.Greater(t, end[1], half[1], "no loss in the second half")
	require.NotEqual(t, 0, o.code, "the loop ended by itself:\n%s", o.stderr)
	require.Len(t, regexp.MustCompile(`(?m)^\[rank \d\] looping pid=`).FindAllString(o.stdout, -1), 4, o.stdout)
	require.NotRegexp(t, `collcheck: gocoll: AllReduce`, o.stderr)
	require.NotContains(t, o.stderr, "stopped answering")
	require.GreaterOrEqual(t, o.took, run)
}

// labTotals returns the bytes that left the routers on every path and the
// emulation's drops, summed over paths and directions.
func labTotals(t *testing.T, l *lab.Lab) [2]uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stats, err := l.Stats(ctx)
	if err != nil {
		t.Errorf("lab stats: %v", err)
		return [2]uint64{}
	}
	var sum [2]uint64
	for _, s := range stats {
		sum[0] += s.TxBytes
		sum[1] += s.EmuDrops
	}
	return sum
}
