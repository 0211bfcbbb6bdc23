package collective_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// settleGoroutines waits (at most 10 s) for the goroutine count to fall to
// want and returns the last count seen.
func settleGoroutines(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// TestAbortEndsPendingOperationsOnEveryRank: ranks 0-2 wait in an
// AllReduce that rank 3 never calls and in a Recv from rank 3; rank 1
// aborts. Every pending operation on every rank ends with ErrAborted
// naming rank 1, rank 3's first call afterwards fails the same way, later
// calls on every rank too, and no goroutine is left.
func TestAbortEndsPendingOperationsOnEveryRank(t *testing.T) {
	base := runtime.NumGoroutine()
	comms := newComms(t, 4, collective.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var handles []*collective.Handle
	for r := range 3 {
		x := make([]float32, 1000)
		handles = append(handles, collective.AllReduceAsync(ctx, comms[r], x, x, collective.Sum))
		handles = append(handles, collective.RecvAsync(ctx, comms[r], make([]int32, 10), 3))
	}
	// Every rank is waiting: no handle may end before the abort.
	for i, h := range handles {
		select {
		case <-h.Done():
			t.Fatalf("handle %d ended before the abort: %v", i, h.Wait(ctx))
		case <-time.After(10 * time.Millisecond):
		}
	}
	start := time.Now()
	require.NoError(t, comms[1].Abort())
	for i, h := range handles {
		err := h.Wait(ctx)
		require.ErrorIs(t, err, collective.ErrAborted, "handle %d", i)
		require.Contains(t, err.Error(), "aborted by rank 1", "handle %d", i)
	}
	t.Logf("every pending operation ended %v after Abort", time.Since(start))

	// Rank 3 had called nothing: its first collective meets the abort.
	x := []float32{1}
	err := collective.AllReduce(ctx, comms[3], x, x, collective.Sum)
	require.ErrorIs(t, err, collective.ErrAborted)
	require.Contains(t, err.Error(), "aborted by rank 1")
	for r, c := range comms {
		require.ErrorIs(t, c.Aborted(), collective.ErrAborted, "rank %d", r)
		require.ErrorIs(t, c.Barrier(ctx), collective.ErrAborted, "rank %d", r)
		require.ErrorIs(t, collective.AllReduce(ctx, c, x, x, collective.Sum), collective.ErrAborted, "rank %d", r)
	}
	require.ErrorIs(t, collective.Send(ctx, comms[0], x, 1), collective.ErrAborted)
	require.NoError(t, comms[1].Abort(), "Abort is idempotent")
	for _, c := range comms {
		require.NoError(t, c.Close())
	}
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left after Abort (%d before)\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestAbortWhileBlockingCallsWait: blocking calls (not Async) on every
// rank but the aborting one end; the communicator's owned closer is
// released once, by its Abort method, and Close does not release it again.
func TestAbortWhileBlockingCallsWait(t *testing.T) {
	eps := inprocWorld(t, 3)
	var aborts, closes atomic.Int32
	owner := &countingCloser{aborts: &aborts, closes: &closes}
	comms := make([]*collective.Comm, 3)
	for r, ep := range eps {
		var err error
		if r == 0 {
			comms[r], err = collective.NewOwning(ep, 7, collective.Config{}, owner)
		} else {
			comms[r], err = collective.New(ep, 7, collective.Config{})
		}
		require.NoError(t, err)
	}
	errs := make(chan error, 2)
	for r := 1; r < 3; r++ {
		go func() {
			x := make([]float64, 1<<16)
			errs <- collective.AllReduce(context.Background(), comms[r], x, x, collective.Max)
		}()
	}
	// Rank 0 never joins the AllReduce: it aborts while the others wait.
	require.NoError(t, comms[0].Abort())
	for range 2 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, collective.ErrAborted)
		case <-time.After(30 * time.Second):
			t.Fatal("a blocking AllReduce did not end within 30 s of Abort")
		}
	}
	require.NoError(t, comms[0].Close())
	require.NoError(t, comms[0].Abort())
	require.Equal(t, int32(1), aborts.Load())
	require.Equal(t, int32(0), closes.Load())
}

type countingCloser struct{ aborts, closes *atomic.Int32 }

func (c *countingCloser) Close() error { c.closes.Add(1); return nil }
func (c *countingCloser) Abort() error { c.aborts.Add(1); return nil }

var _ io.Closer = (*countingCloser)(nil)

// TestAbortedErrorIsNotAPeerError: an ordinary failure does not mark the
// communicator aborted.
func TestAbortedErrorIsNotAPeerError(t *testing.T) {
	comms := newComms(t, 2, collective.Config{})
	errs := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		x := make([]float32, 10+r) // mismatched counts
		return collective.AllReduce(ctx, c, x, x, collective.Sum)
	})
	for r, err := range errs {
		require.Error(t, err)
		require.False(t, errors.Is(err, collective.ErrAborted), "rank %d: %v", r, err)
		require.NoError(t, comms[r].Aborted())
	}
}

// TestMaxRunningOps: with rank 1 absent, rank 0 issues MaxRunningOps
// AllReduceAsync calls that wait; the next one fails at once saying why,
// and Abort ends them all.
func TestMaxRunningOps(t *testing.T) {
	if testing.Short() {
		t.Skip("4096 waiting operations take about a minute under the race detector (the -short pass); 2 s without")
	}
	comms := newComms(t, 2, collective.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x := make([]float32, 1)
	handles := make([]*collective.Handle, 0, collective.MaxRunningOps)
	for range collective.MaxRunningOps {
		handles = append(handles, collective.AllReduceAsync(ctx, comms[0], x, make([]float32, 1), collective.Sum))
	}
	// Until all their goroutines have started, a new one may still be
	// admitted: try until one fails (each admitted one waits too).
	var err error
	for range 2 * collective.MaxRunningOps {
		h := collective.AllReduceAsync(ctx, comms[0], x, make([]float32, 1), collective.Sum)
		select {
		case <-h.Done():
			err = h.Wait(ctx)
		case <-time.After(20 * time.Millisecond):
			handles = append(handles, h)
			continue
		}
		break
	}
	require.ErrorContains(t, err, "MaxRunningOps")
	require.NoError(t, comms[0].Abort())
	aborted := 0
	for _, h := range handles {
		// Goroutines start in any order: a handle issued early may have
		// met the limit too.
		err := h.Wait(ctx)
		if errors.Is(err, collective.ErrAborted) {
			aborted++
		} else {
			require.ErrorContains(t, err, "MaxRunningOps")
		}
	}
	// Those whose goroutine started only after the Abort fail on it too.
	require.GreaterOrEqual(t, aborted, collective.MaxRunningOps, "the operations that ran were all aborted")
}
