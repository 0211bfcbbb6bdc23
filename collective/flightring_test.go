package collective

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlightRecorderKeepsRunningRecords starts three rings' worth of
// operations and ends every other one: the ring holds the newest
// FlightRecords, and each running operation's record, in the ring or not,
// stays readable and writable until it ends, in start order.
func TestFlightRecorderKeepsRunningRecords(t *testing.T) {
	const n = 3 * FlightRecords
	var f flightRecorder
	t0 := time.Now()
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = f.start(OpRecord{Comm: 1, Rank: 1, Size: 2, Seq: uint64(i), Kind: KindSendRecv, State: OpRunning,
			Start: t0.Add(time.Duration(i)), WaitingOn: -1})
	}
	for i, id := range ids {
		f.update(id, func(r *OpRecord) { r.WaitingOn, r.Missing = 0, []int{0} })
		if i%2 == 1 {
			f.update(id, func(r *OpRecord) { r.State, r.End = OpDone, time.Now() })
		}
	}
	require.Len(t, f.snapshot(), FlightRecords)
	require.Len(t, f.evicted, (n-FlightRecords)/2, "the ring's dropped records of running operations, no more")
	op, running, ok := f.stalled(ids[0]) // left the ring long ago
	require.True(t, ok)
	require.Equal(t, uint64(0), op.Seq)
	require.Equal(t, OpRunning, op.State)
	require.Equal(t, []int{0}, op.Missing)
	require.Len(t, running, n/2)
	for i, r := range running {
		require.Equal(t, uint64(2*i), r.Seq, "oldest first")
		require.Equal(t, 0, r.WaitingOn)
	}
	_, _, ok = f.stalled(ids[1]) // ended and left the ring
	require.False(t, ok)
	for i, id := range ids {
		if i%2 == 0 {
			f.update(id, func(r *OpRecord) { r.State, r.End = OpFailed, time.Now() })
		}
	}
	require.Empty(t, f.evicted, "an ended operation's record does not stay aside")
	_, running, _ = f.stalled(ids[n-1])
	require.Empty(t, running)
}

// TestStallReportText checks a report's text at many pending operations:
// the oldest maxStallListed listed, the others counted by the rank they
// wait on, the largest counts first, at most maxStallGroups ranks named.
func TestStallReportText(t *testing.T) {
	at := time.Now()
	rec := func(seq, waitingOn int) OpRecord {
		return OpRecord{Comm: 1, Rank: 1, Size: 8, Seq: uint64(seq), Kind: KindAllReduce, Root: -1, State: OpRunning,
			Start: at.Add(-time.Minute), WaitingOn: waitingOn}
	}
	var pending []OpRecord
	for i := range 1000 {
		w := []int{0, 0, 0, 2, 2, 3, 4, 5, -1, 0}[i%10]
		pending = append(pending, rec(i, w))
	}
	s := StallReport{At: at, Op: pending[0], Pending: pending}
	text := s.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.Len(t, lines, 1+maxStallListed+1, text)
	require.Contains(t, lines[0], "rank 1 of 8 has run AllReduce #0 for 1m0s; waiting on rank 0", text)
	require.Contains(t, lines[maxStallListed], "AllReduce #15 ", text)
	// 984 unlisted, seq 16..999: 98 of each residue mod 10, 99 of 6-9.
	require.Equal(t, "  and 984 more running operations: 393 waiting on rank 0, 196 waiting on rank 2, 99 waiting on rank 4, "+
		"197 waiting on 2 other ranks, 99 on no single rank", lines[len(lines)-1])
}

// TestRankListIsBounded checks that a list of ranks names at most
// maxRanksListed of them and counts the rest.
func TestRankListIsBounded(t *testing.T) {
	require.Equal(t, "rank 3", rankList([]int{3}))
	require.Equal(t, "ranks 1, 3", rankList([]int{1, 3}))
	many := make([]int, 1000)
	for i := range many {
		many[i] = i + 1
	}
	require.Equal(t, "ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 and 984 more", rankList(many))
	require.Equal(t, "ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16", rankList(many[:16]))
}
