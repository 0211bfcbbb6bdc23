package mrtransport

import (
	"bytes"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer that several endpoints' loggers share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestCloseLogsEngineCounters checks that Close logs, at info, one
// "mrtransport: engine" line per endpoint with its socket counters, which
// agree with Stats: datagrams and the system calls that moved them, and
// the DATA and ACK datagrams among them, and the core's ACKs by kind of
// connection and reason (metaroce.AckCounts).
func TestCloseLogsEngineCounters(t *testing.T) {
	ctx := testCtx(t)
	var buf lockedBuffer
	eps, err := NewLocalWorld(ctx, 2, Config{Paths: 2, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	require.NoError(t, err)
	allReduceSum(t, newComms(t, eps), 1<<16)
	var want []int64
	for _, ep := range eps {
		require.NoError(t, ep.Close())
		st := ep.Stats().Engine
		want = append(want, st.DatagramsWritten)
		require.Positive(t, st.DataPolled)
		require.LessOrEqual(t, st.AcksOnData, st.DataPolled)
		require.LessOrEqual(t, st.DataPolled+st.AcksPolled, st.DatagramsWritten)
		require.NoError(t, ep.Close()) // idempotent: no second line
	}
	require.Regexp(t, ` data=\d+ acksOnData=\d+ acks=\d+`, buf.String())
	require.Regexp(t, ` acksShort=held:\d+,every:\d+,gap:\d+,last:\d+,dup:\d+,control:\d+,credit:\d+,packets:\d+ acksLong=held:\d+,`, buf.String())
	lines := regexp.MustCompile(`msg="mrtransport: engine" rank=(\d) datagramsWritten=(\d+) writeBatches=(\d+) datagramsRead=\d+ readBatches=(\d+)`).
		FindAllStringSubmatch(buf.String(), -1)
	require.Len(t, lines, 2, buf.String())
	for _, l := range lines {
		r, _ := strconv.Atoi(l[1])
		written, _ := strconv.ParseInt(l[2], 10, 64)
		batches, _ := strconv.ParseInt(l[3], 10, 64)
		reads, _ := strconv.ParseInt(l[4], 10, 64)
		require.Equal(t, want[r], written, "rank %d", r)
		require.Positive(t, batches)
		require.LessOrEqual(t, batches, written)
		require.Positive(t, reads)
	}
}
