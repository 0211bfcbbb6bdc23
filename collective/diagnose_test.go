package collective_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

func running(rank, seq, waitingOn int, missing ...int) collective.OpRecord {
	return collective.OpRecord{Comm: 1, Rank: rank, Size: 4, Seq: uint64(seq), Kind: collective.KindAllReduce,
		State: collective.OpRunning, Start: time.Now(), WaitingOn: waitingOn, Missing: missing, Root: -1}
}

func done(rank, seq int) collective.OpRecord {
	return collective.OpRecord{Comm: 1, Rank: rank, Size: 4, Seq: uint64(seq), Kind: collective.KindBarrier,
		State: collective.OpDone, Start: time.Now(), End: time.Now(), WaitingOn: -1, Root: -1}
}

// p2p is a running point-to-point record of rank, waiting on waitingOn.
func p2p(rank, seq, waitingOn int, missing ...int) collective.OpRecord {
	r := running(rank, seq, waitingOn, missing...)
	r.Kind, r.Algo = collective.KindSendRecv, collective.AlgoDirect
	return r
}

// TestDiagnoseNamesTheCulprit checks the culprit Diagnose names from
// made-up records: not the first rank that complains, but the one the
// others point at.
func TestDiagnoseNamesTheCulprit(t *testing.T) {
	cases := map[string]struct {
		records [][]collective.OpRecord
		culprit int
		reason  string
		says    string
	}{
		"never arrived": {
			records: [][]collective.OpRecord{
				{done(0, 4), running(0, 5, 3, 3)}, {done(1, 4), running(1, 5, 0)},
				{done(2, 4), running(2, 5, 3, 3)}, {done(3, 4)},
			},
			culprit: 3, reason: "never arrived", says: "rank 3 never arrived at AllReduce #5",
		},
		"did not answer and never arrived": {
			records: [][]collective.OpRecord{{running(0, 5, 1)}, {running(1, 5, 2, 2)}, nil, {running(3, 5, 2)}},
			culprit: 2, reason: "never arrived", says: "rank 2 never arrived",
		},
		"did not answer": {
			records: [][]collective.OpRecord{{running(0, 5, 2)}, {running(1, 5, 0)}, nil, {running(3, 5, 2)}},
			culprit: 2, reason: "did not answer", says: "rank 2 did not answer",
		},
		"end of the wait chain": {
			records: [][]collective.OpRecord{{running(0, 5, 1)}, {running(1, 5, 2)}, {running(2, 5, 3)}, {running(3, 5, -1)}},
			culprit: 3, reason: "is waited on", says: "wait, in turn, on rank 3",
		},
		"the oldest operation counts": {
			records: [][]collective.OpRecord{
				{done(0, 4), running(0, 5, 1), running(0, 6, 2)}, {done(1, 4)},
				{done(2, 4), running(2, 5, 1)}, {done(3, 4), running(3, 5, 1)},
			},
			culprit: 1, reason: "never arrived", says: "AllReduce #5",
		},
		"point-to-point: never arrived": {
			records: [][]collective.OpRecord{{done(0, 4)}, {done(1, 4), p2p(1, 7, 0, 0), p2p(1, 8, 0, 0)}, {done(2, 4)}, {done(3, 4)}},
			culprit: 0, reason: "never arrived", says: "rank 0 never arrived at the point-to-point operation that rank 1 waits in, Send/Recv #7",
		},
		"point-to-point: the wait chain": {
			records: [][]collective.OpRecord{
				{p2p(0, 2, -1), p2p(0, 3, 1, 1)}, {p2p(1, 0, 3)}, {done(2, 4)}, {done(3, 4), p2p(3, 1, 2, 2)},
			},
			culprit: 2, reason: "never arrived", says: "rank 2 never arrived at the point-to-point operation that rank 3 waits in, Send/Recv #1",
		},
		"point-to-point: did not answer": {
			records: [][]collective.OpRecord{{done(0, 4)}, {p2p(1, 0, 2)}, nil, {done(3, 4)}},
			culprit: 2, reason: "did not answer", says: "rank 2 did not answer, while rank 1 waits on it in Send/Recv #0",
		},
		"point-to-point: a cycle": {
			records: [][]collective.OpRecord{{p2p(0, 0, 1)}, {p2p(1, 0, 0)}, {done(2, 4)}, {done(3, 4)}},
			culprit: 0, reason: "is waited on", says: "in turn, on rank 0",
		},
		"point-to-point: none blocked": {
			records: [][]collective.OpRecord{{p2p(0, 0, -1)}, {done(1, 4)}, {done(2, 4)}, {done(3, 4)}},
			culprit: -1, says: "no hang seen",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := collective.Diagnose(1, tc.records)
			require.True(t, d.Stuck)
			require.Equal(t, tc.culprit, d.Culprit, d.String())
			require.Equal(t, tc.reason, d.Reason)
			require.Contains(t, d.Headline, tc.says)
			require.Len(t, d.Ranks, len(tc.records))
		})
	}
	d := collective.Diagnose(1, [][]collective.OpRecord{{done(0, 1)}, {done(1, 1)}})
	require.False(t, d.Stuck)
	require.Equal(t, -1, d.Culprit)
}

// TestDiagnoseLivePointToPoint has rank 1 of 3 send to rank 0, which
// never receives, while no collective runs: the diagnosis names rank 0.
func TestDiagnoseLivePointToPoint(t *testing.T) {
	const n = 3
	comms := newComms(t, n, collective.Config{StallTimeout: -1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := collective.SendAsync(ctx, comms[1], make([]byte, 4096), 0)
	var d collective.Diagnosis
	require.Eventually(t, func() bool {
		records := make([][]collective.OpRecord, n)
		for r, c := range comms {
			records[r] = c.FlightRecord()
		}
		d = collective.Diagnose(comms[0].ID(), records)
		return d.Culprit >= 0
	}, 20*time.Second, 10*time.Millisecond)
	t.Log(d)
	require.True(t, d.Stuck)
	require.Equal(t, 0, d.Culprit, d.String())
	require.Equal(t, "never arrived", d.Reason)
	require.Equal(t, collective.KindSendRecv, d.Op.Kind)
	require.Equal(t, 1, d.Op.Rank)
	cancel()
	require.Error(t, h.Wait(context.Background()))
}

// TestDiagnoseLiveHang gathers the flight records of 4 ranks while rank 2
// never calls an AllReduce the others wait in, and checks that the
// diagnosis names rank 2.
func TestDiagnoseLiveHang(t *testing.T) {
	const n, absent = 4, 2
	comms := newComms(t, n, collective.Config{StallTimeout: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, n)
	for r := 0; r < n; r++ {
		if r == absent {
			continue
		}
		go func() {
			x := make([]float32, 1<<16)
			done <- collective.AllReduce(ctx, comms[r], x, x, collective.Sum)
		}()
	}
	var d collective.Diagnosis
	require.Eventually(t, func() bool {
		records := make([][]collective.OpRecord, n)
		for r, c := range comms {
			records[r] = c.FlightRecord()
		}
		d = collective.Diagnose(comms[0].ID(), records)
		return d.Stuck && len(collective.Pending(records[0])) == 1 && len(collective.Pending(records[1])) == 1 && len(collective.Pending(records[3])) == 1
	}, 20*time.Second, 10*time.Millisecond)
	t.Log(d)
	require.Equal(t, absent, d.Culprit, d.String())
	require.Equal(t, "never arrived", d.Reason)
	cancel()
	for i := 0; i < n-1; i++ {
		require.Error(t, <-done)
	}
}
