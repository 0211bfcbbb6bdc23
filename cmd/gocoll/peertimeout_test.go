//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stampedLine is a line of output and when it was read.
type stampedLine struct {
	at   time.Time
	text string
}

// A rank stopped (SIGSTOP) in the middle of AllReduce over MetaRoCE is
// named on every other rank by GOCOLL_PEER_TIMEOUT, long before the store
// heartbeat's 30 s: the process's sockets stay open and nothing answers.
func TestRunStoppedRankNamedByPeerTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the peer timeout and the launcher's grace: not in -short")
	}
	// Not the default (2 s), to see that the variable is what counts: the
	// peer is named after more than 3 s (it may have been quiet for a
	// moment before the stop) and before 10 s.
	const peerTimeout, slack = 4 * time.Second, 6 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j := startLoopJob(t, ctx, 3, "-np", "3", "-x", "GOCOLL_TRANSPORT=metaroce",
		"-x", fmt.Sprintf("GOCOLL_PEER_TIMEOUT=%v", peerTimeout), "--", bins.collcheck, "-mode", "loop", "-count", "4096")
	const victim = 1
	stopped := time.Now()
	require.NoError(t, syscall.Kill(j.pids[victim], syscall.SIGSTOP))
	all, _, code := j.finish(t, ctx) // every rank gone too
	require.NotZero(t, code)
	for _, r := range []int{0, 2} {
		found, text := firstError(all, r, stopped)
		require.NotNil(t, found, "rank %d printed no error:\n%s", r, text)
		require.Regexp(t, `rank 1\b.*stopped answering`, found.text, "rank %d", r)
		took := found.at.Sub(stopped)
		require.Less(t, took, peerTimeout+slack, "rank %d named rank 1 too late:\n%s", r, text)
		require.Greater(t, took, peerTimeout-time.Second, "rank %d named rank 1 before the timeout:\n%s", r, text)
		t.Logf("rank %d named rank 1 %.2fs after SIGSTOP: %s", r, took.Seconds(), found.text)
	}
}

// stampLines reads r's lines into a channel, each stamped with when it was
// read; the channel closes at r's end.
func stampLines(r io.Reader) <-chan stampedLine {
	lines := make(chan stampedLine, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- stampedLine{time.Now(), sc.Text()}
		}
	}()
	return lines
}

// firstError returns the first line in which rank r reports its
// AllReduce's error, and all lines as text with times from since.
func firstError(all []stampedLine, r int, since time.Time) (*stampedLine, string) {
	var text strings.Builder
	for _, l := range all {
		fmt.Fprintf(&text, "%6.2fs %s\n", l.at.Sub(since).Seconds(), l.text)
	}
	re := regexp.MustCompile(fmt.Sprintf(`^\[rank %d\] collcheck: gocoll: AllReduce`, r))
	for i := range all {
		if re.MatchString(all[i].text) {
			return &all[i], text.String()
		}
	}
	return nil, text.String()
}
