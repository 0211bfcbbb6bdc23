package launcher

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/transport"
)

// setUpStore serves a store on loopback, as testStore does, and returns
// its address and the view of t's job in it.
func setUpStore(t *testing.T) (string, store.Store) {
	srv, err := store.Listen(context.Background(), "127.0.0.1:0", store.Config{JobKey: mustKey(testJobKey)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr().String(), JobStore(srv.Local(), t.Name())
}

// startJoins runs Init for each rank of ctxs on a goroutine of its own; the
// returned function waits for them and returns the errors by rank (nil
// for the ranks not started), closing any world that formed.
func startJoins(t *testing.T, n int, ctxs map[int]context.Context, envOf func(r int) []string) func() []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, ctx := range ctxs {
		wg.Go(func() {
			w, err := Init(ctx, Options{Environ: envOf(r)})
			if err == nil {
				_ = w.Abort()
			}
			errs[r] = err
		})
	}
	return func() []error { wg.Wait(); return errs }
}

// waitClaimed waits until ranks have claimed their numbers in the job's
// store and know it: they heartbeat.
func waitClaimed(t *testing.T, kv store.Store, ranks ...int) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, r := range ranks {
		require.NoError(t, kv.Wait(ctx, store.HeartbeatKey(r)))
	}
}

// requireNamesRank checks that err is a Join error caused by rank's
// leaving, wrapping cause.
func requireNamesRank(t *testing.T, err error, rank int, cause error) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, cause, err.Error())
	var pe *transport.PeerError
	require.ErrorAs(t, err, &pe, err.Error())
	require.Equal(t, rank, pe.Rank, err.Error())
	require.NotContains(t, err.Error(), "\n")
}

// A rank whose Join ends while the others wait at the rendezvous (rank 2
// of 4 never comes; rank 3's context is cancelled, as Ctrl-C does in a
// program that uses signal.NotifyContext) makes ranks 0 and 1 fail at
// once with an error that names rank 3 and says why it left, not after
// GOCOLL_CONNECT_TIMEOUT with one that names only the missing rank 2.
func TestJoinFailsWhenARankLeavesDuringSetUp(t *testing.T) {
	addr, kv := setUpStore(t)
	const n, leaver = 4, 3
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	bg := context.Background()
	wait := startJoins(t, n, map[int]context.Context{0: bg, 1: bg, leaver: ctx3}, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvConnectTimeout+"=60s")
	})
	waitClaimed(t, kv, 0, 1, leaver)
	cancel3()
	errs := wait()
	require.ErrorIs(t, errs[leaver], context.Canceled)
	for r := range 2 {
		requireNamesRank(t, errs[r], leaver, ErrRankLeft)
		require.Contains(t, errs[r].Error(), "rank 3: left the job before the world formed: ", "rank %d", r)
		require.Contains(t, errs[r].Error(), "context canceled", "rank %d: rank 3's reason", r)
		t.Logf("rank %d: %v", r, errs[r])
	}
}

// When the rank that serves the store (rank 0) leaves during the set-up,
// the others fail at once too, naming it.
func TestJoinFailsWhenTheServingRankLeavesDuringSetUp(t *testing.T) {
	addr := freeAddr(t)
	const n = 3
	ctx0, cancel0 := context.WithCancel(context.Background())
	defer cancel0()
	bg := context.Background()
	wait := startJoins(t, n, map[int]context.Context{0: ctx0, 1: bg}, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvStoreServe+"=1", EnvConnectTimeout+"=60s")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := store.Dial(ctx, addr, store.ClientConfig{JobKey: mustKey(testJobKey)}) // retries until rank 0 serves
	require.NoError(t, err)
	waitClaimed(t, JobStore(c, t.Name()), 0, 1)
	_ = c.Close()
	cancel0()
	errs := wait()
	require.ErrorIs(t, errs[0], context.Canceled)
	require.Error(t, errs[1])
	var pe *transport.PeerError
	require.ErrorAs(t, errs[1], &pe, errs[1].Error())
	require.Equal(t, 0, pe.Rank, errs[1].Error())
	require.False(t, errors.Is(errs[1], context.DeadlineExceeded), errs[1].Error())
	t.Logf("rank 1: %v", errs[1])
}
