package launcher

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
)

// TestDiagnoseThroughTheStore has rank 2 of 3 never call an AllReduce: a
// Diagnose on a rank that waits asks every rank for its flight record
// through the store and names rank 2, which answers from outside the
// operation.
func TestDiagnoseThroughTheStore(t *testing.T) {
	addr := testStore(t)
	const n, absent = 3, 2
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvStallTimeout+"=300ms") })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for r, w := range worlds {
		if r == absent {
			continue
		}
		wg.Go(func() {
			x := make([]float32, 1024)
			_ = collective.AllReduce(ctx, w.Comm, x, x, collective.Sum)
		})
	}
	var d collective.Diagnosis
	require.Eventually(t, func() bool {
		// Each request waits 5 s at most for the answers.
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		defer dcancel()
		var err error
		d, err = worlds[1].Diagnose(dctx)
		require.NoError(t, err)
		// Until the goroutines of ranks 0 and 1 have both entered their
		// AllReduce, a rank that has not looks absent as well (the
		// diagnosis then names two ranks).
		return d.Stuck && d.Ranks[0] != "rank 0: did not answer" &&
			!strings.Contains(d.Ranks[0], "no operation") && !strings.Contains(d.Ranks[1], "no operation")
	}, 15*time.Second, 50*time.Millisecond)
	t.Log(d)
	require.Equal(t, absent, d.Culprit, d.String())
	require.Equal(t, "never arrived", d.Reason)
	require.Contains(t, d.Headline, "rank 2 never arrived")
	cancel()
	wg.Wait()
}

// The ranks of a job too large for each to hold a wait on the store look
// for a request at every heartbeat instead; both ways see it.
func TestAwaitRequestBothWays(t *testing.T) {
	for _, size := range []int{4, maxWaitingAnswerers + 1} {
		lc := &lifecycle{job: Job{Size: size, HeartbeatTimeout: 200 * time.Millisecond},
			kv: store.NewMemStore(store.Limits{})}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan error, 1)
		go func() { done <- lc.awaitRequest(ctx, 1) }()
		n, err := lc.kv.Add(ctx, diagCountKey, 1)
		require.NoError(t, err)
		require.NoError(t, lc.kv.Set(ctx, diagGoKey(n), nil))
		require.NoError(t, <-done, "size %d", size)
		cancel()
	}
}
