package launcher

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/shm"
)

// resources counts what a world may leak: goroutines, open file
// descriptors, and entries of /dev/shm.
type resources struct {
	goroutines, fds int
	shm             []string
}

func countResources(t *testing.T) resources {
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var names []string
	if ents, err := os.ReadDir("/dev/shm"); err == nil {
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	return resources{goroutines: runtime.NumGoroutine(), fds: len(fds), shm: names}
}

// requireReleased waits (10 s at most) until the goroutines and file
// descriptors are back to before's and /dev/shm holds nothing new.
func requireReleased(t *testing.T, before resources) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var now resources
	for {
		now = countResources(t)
		if now.goroutines <= before.goroutines && now.fds <= before.fds || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if now.goroutines > before.goroutines {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Abort, %d before\n%s", now.goroutines, before.goroutines, buf[:runtime.Stack(buf, true)])
	}
	require.LessOrEqual(t, now.fds, before.fds, "file descriptors after Abort")
	for _, n := range now.shm {
		require.True(t, slices.Contains(before.shm, n), "/dev/shm/%s left after Abort", n)
	}
}

// TestWorldAbortReleasesEverything: over each transport, rank 0 aborts
// while ranks 1 and 2 wait in an AllReduce it never joins. Their calls
// end with an error naming rank 0, they abort too, and afterwards no
// goroutine, file descriptor (socket, memfd, eventfd) or /dev/shm entry
// of the three worlds is left.
func TestWorldAbortReleasesEverything(t *testing.T) {
	for _, tr := range []string{TransportAuto, TransportTCP, TransportMetaRoCE} {
		t.Run(tr, func(t *testing.T) {
			if tr == TransportAuto && !shm.Supported {
				t.Skip("shared memory needs Linux")
			}
			addr := testStore(t)
			before := countResources(t)
			const n = 3
			worlds, errs := joinAll(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"="+tr) })
			for _, err := range errs {
				require.NoError(t, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			callErrs := make([]error, n)
			var wg sync.WaitGroup
			for r := 1; r < n; r++ {
				wg.Go(func() {
					x := make([]float32, 1<<16)
					callErrs[r] = collective.AllReduce(ctx, worlds[r].Comm, x, x, collective.Sum)
				})
			}
			// Wait until both have started the AllReduce.
			for _, w := range worlds[1:] {
				for len(w.FlightRecord()) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			start := time.Now()
			require.NoError(t, worlds[0].Abort())
			wg.Wait()
			t.Logf("the waiting ranks' AllReduce ended %v after rank 0's Abort began", time.Since(start))
			for r := 1; r < n; r++ {
				require.Error(t, callErrs[r], "rank %d", r)
				require.Contains(t, callErrs[r].Error(), "rank 0", "rank %d", r)
				t.Logf("rank %d: %v", r, callErrs[r])
			}
			x := []float32{1}
			require.ErrorIs(t, collective.AllReduce(ctx, worlds[0].Comm, x, x, collective.Sum), collective.ErrAborted)
			for _, w := range worlds[1:] {
				require.NoError(t, w.Abort())
			}
			for _, w := range worlds {
				require.NoError(t, w.Close(), "Close after Abort does nothing more")
			}
			requireReleased(t, before)
		})
	}
}

// TestWorldShrinkAfterARankLeaves: over auto (shared memory within a host,
// MetaRoCE between), TCP and MetaRoCE alone, rank 2 of 4 aborts
// (and so stops heartbeating); nobody names it, so the survivors' Shrink
// waits until their watchers declare it dead, then every survivor gets the
// same 3-rank communicator, which reduces correctly over the world's
// transport.
func TestWorldShrinkAfterARankLeaves(t *testing.T) {
	for _, tr := range []string{TransportAuto, TransportTCP, TransportMetaRoCE} {
		t.Run(tr, func(t *testing.T) {
			if tr == TransportAuto && !shm.Supported {
				t.Skip("shared memory needs Linux")
			}
			addr := testStore(t)
			const n = 4
			worlds, errs := joinAll(t, n, func(r int) []string {
				return rankEnv(t, addr, r, n, EnvTransport+"="+tr, EnvHeartbeatTimeout+"=1s")
			})
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, worlds[2].Abort())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			subs := make([]*collective.Comm, n)
			sums := make([][]int64, n)
			callErrs := make([]error, n)
			var wg sync.WaitGroup
			for _, r := range []int{0, 1, 3} {
				wg.Go(func() {
					sub, err := worlds[r].Shrink(ctx, nil)
					if err != nil {
						callErrs[r] = err
						return
					}
					subs[r] = sub
					x := []int64{int64(r), 1}
					callErrs[r] = collective.AllReduce(ctx, sub, x, x, collective.Sum)
					sums[r] = x
				})
			}
			wg.Wait()
			for i, r := range []int{0, 1, 3} {
				require.NoError(t, callErrs[r], "rank %d", r)
				require.Equal(t, i, subs[r].Rank())
				require.Equal(t, 3, subs[r].Size())
				require.Equal(t, subs[0].ID(), subs[r].ID())
				require.Equal(t, []int64{0 + 1 + 3, 3}, sums[r], "rank %d", r)
				require.NoError(t, subs[r].Close())
			}
			var cw sync.WaitGroup
			for _, r := range []int{0, 1, 3} {
				cw.Go(func() {
					if err := worlds[r].Close(); err != nil && !errors.Is(err, collective.ErrClosed) {
						t.Errorf("rank %d: Close: %v", r, err)
					}
				})
			}
			cw.Wait()
		})
	}
}

// TestDeclareDeadSparesCommunicatorsWithoutTheRank: a rank's death ends
// the pending operations of communicators it may belong to (one never
// announced, one announced with it), and not those of a communicator
// announced without it, as one Shrink made.
func TestDeclareDeadSparesCommunicatorsWithoutTheRank(t *testing.T) {
	w, err := inproc.NewWorld(3)
	require.NoError(t, err)
	defer w.Close()
	g := newGuardedEndpoint(w.Endpoint(0))
	g.CommMembers([]uint64{5}, []int{0, 1})
	g.CommMembers([]uint64{6}, []int{0, 1, 2})
	recv := func(comm uint64) transport.Request {
		return g.Recv(1, transport.Tag{OpKey: transport.OpKey{Comm: comm, Op: 1}}, make([]byte, 4))
	}
	unknown, with, without := recv(1), recv(6), recv(5)
	require.True(t, g.declareDead(2, errors.New("no heartbeat")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, r := range []transport.Request{unknown, with} {
		_, err := r.Wait(ctx)
		var pe *transport.PeerError
		require.True(t, errors.As(err, &pe), "%v", err)
		require.Equal(t, 2, pe.Rank)
	}
	select {
	case <-without.Done():
		t.Fatal("the operation of a communicator without rank 2 ended")
	case <-time.After(50 * time.Millisecond):
	}
	without.Cancel()
}
