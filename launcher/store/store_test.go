package store

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fixture is one fresh shared store of some backend.
type fixture struct {
	// handle opens another handle on the shared store (for TCP: another
	// client connection). Handles are closed when the test ends.
	handle func() Store
	// shutdown closes the shared store itself (MemStore.Close or
	// Server.Close).
	shutdown func()
	// pending returns the number of waits blocked in the shared store.
	pending func() int
	// keys returns the number of keys in the shared store.
	keys func() int
}

// backend makes fixtures; every test in this file runs on each backend.
type backend struct {
	name string
	open func(t *testing.T, lim Limits) fixture
}

// backends is filled by init functions of the test files, one per backend.
var backends = []backend{{name: "mem", open: openMem}}

func openMem(t *testing.T, lim Limits) fixture {
	m := NewMemStore(lim)
	t.Cleanup(func() { _ = m.Close() })
	return fixture{
		handle:   func() Store { return m },
		shutdown: func() { _ = m.Close() },
		pending:  m.t.pendingWaits,
		keys:     m.t.keyCount,
	}
}

// waitPending waits until the fixture's store has n blocked waits.
func waitPending(t *testing.T, f fixture, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return f.pending() == n }, long, time.Millisecond,
		"want %d pending waits, have %d", n, f.pending())
}

// eachBackend runs test on a fresh fixture of every backend.
func eachBackend(t *testing.T, lim Limits, test func(t *testing.T, f fixture)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b.open(t, lim)) })
	}
}

// testCtx returns a context that ends after d, or when the test ends.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// long is the deadline of calls that are expected to succeed; it only
// bounds a broken test.
const long = 20 * time.Second

// short is the deadline of calls that are expected to time out.
const short = 50 * time.Millisecond

func TestSetGetTryGet(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		v, ok, err := s.TryGet(ctx, "a")
		require.NoError(t, err)
		require.False(t, ok)
		require.Nil(t, v)

		require.NoError(t, s.Set(ctx, "a", []byte("one")))
		require.NoError(t, s.Set(ctx, "a", []byte("two")))
		got, err := s.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, []byte("two"), got)

		require.NoError(t, s.Set(ctx, "empty", nil))
		v, ok, err = s.TryGet(ctx, "empty")
		require.NoError(t, err)
		require.True(t, ok)
		require.NotNil(t, v)
		require.Empty(t, v)

		// The caller's buffer is copied on Set, and Get returns a copy.
		buf := []byte("xyz")
		require.NoError(t, s.Set(ctx, "copy", buf))
		buf[0] = 'Q'
		got, err = s.Get(ctx, "copy")
		require.NoError(t, err)
		require.Equal(t, []byte("xyz"), got)
		got[0] = 'W'
		got, err = s.Get(ctx, "copy")
		require.NoError(t, err)
		require.Equal(t, []byte("xyz"), got)
	})
}

func TestGetWaitsForSet(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		getter, setter, ctx := f.handle(), f.handle(), testCtx(t, long)
		got := make(chan []byte, 1)
		go func() {
			v, err := getter.Get(ctx, "late")
			if err != nil {
				v = []byte(err.Error())
			}
			got <- v
		}()
		waitPending(t, f, 1)
		require.NoError(t, setter.Set(ctx, "late", []byte("here")))
		require.Equal(t, []byte("here"), <-got)
	})
}

func TestWaitWakesOnSet(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		waiter, setter, ctx := f.handle(), f.handle(), testCtx(t, long)
		done := make(chan error, 1)
		go func() { done <- waiter.Wait(ctx, "k1", "k2", "k3") }()
		for _, k := range []string{"k3", "k1"} {
			require.NoError(t, setter.Set(ctx, k, nil))
		}
		waitPending(t, f, 1)
		select {
		case err := <-done:
			t.Fatalf("Wait returned %v before k2 was set", err)
		default:
		}
		require.NoError(t, setter.Set(ctx, "k2", nil))
		require.NoError(t, <-done)
		require.NoError(t, waiter.Wait(ctx), "Wait with no keys")
	})
}

func TestWaitNeedsAllKeysAtOnce(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		waiter, setter, ctx := f.handle(), f.handle(), testCtx(t, long)
		done := make(chan error, 1)
		go func() { done <- waiter.Wait(ctx, "a", "b") }()
		waitPending(t, f, 1)
		require.NoError(t, setter.Set(ctx, "a", nil))
		existed, err := setter.Delete(ctx, "a")
		require.NoError(t, err)
		require.True(t, existed)
		require.NoError(t, setter.Set(ctx, "b", nil))
		waitPending(t, f, 1) // still waiting: a is gone
		require.NoError(t, setter.Set(ctx, "a", nil))
		require.NoError(t, <-done)
	})
}

func TestWaitDeadlineNamesMissingKeys(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s := f.handle()
		require.NoError(t, s.Set(testCtx(t, long), "b", nil))
		ctx := newExpiringCtx(t)
		done := make(chan error, 1)
		go func() { done <- s.Wait(ctx, "a", "b", "c") }()
		waitPending(t, f, 1)
		ctx.expire()
		err := <-done
		var mk *MissingKeysError
		require.ErrorAs(t, err, &mk)
		require.Equal(t, []string{"a", "c"}, mk.Keys)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Contains(t, err.Error(), `["a" "c"]`)
		waitPending(t, f, 0)

		// The same on the real clock.
		_, err = s.Get(testCtx(t, short), "nope")
		require.ErrorAs(t, err, &mk)
		require.Equal(t, []string{"nope"}, mk.Keys)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		waitPending(t, f, 0)
	})
}

func TestWaitOnEndedContext(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s := f.handle()
		require.NoError(t, s.Set(testCtx(t, long), "b", nil))
		ctx := newExpiringCtx(t)
		ctx.expire()
		err := s.Wait(ctx, "a", "b")
		var mk *MissingKeysError
		require.ErrorAs(t, err, &mk)
		require.Equal(t, []string{"a", "b"}, mk.Keys, "an ended wait names every key")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		_, err = s.Get(ctx, "b")
		require.ErrorAs(t, err, &mk)
		require.NoError(t, s.Wait(ctx), "no keys: nothing to wait for")
		_, _, err = s.TryGet(ctx, "b")
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// expiringCtx is a context whose deadline passes when the test calls
// expire, so that deadline tests do not race the clock. Its Deadline is an
// hour away, so a server's copy of the timeout never fires first.
type expiringCtx struct {
	context.Context
	deadline time.Time
	done     chan struct{}
	once     sync.Once
}

func newExpiringCtx(t *testing.T) *expiringCtx {
	return &expiringCtx{Context: t.Context(), deadline: time.Now().Add(time.Hour), done: make(chan struct{})}
}

func (c *expiringCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *expiringCtx) Done() <-chan struct{}       { return c.done }
func (c *expiringCtx) expire()                     { c.once.Do(func() { close(c.done) }) }

func (c *expiringCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func TestWaitCancelled(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s := f.handle()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Wait(ctx, "never") }()
		waitPending(t, f, 1)
		cancel()
		err := <-done
		require.ErrorIs(t, err, context.Canceled)
		var mk *MissingKeysError
		require.ErrorAs(t, err, &mk)
		require.Equal(t, []string{"never"}, mk.Keys)
		waitPending(t, f, 0)

		// A call on an ended context fails at once, even if it need not wait.
		require.ErrorIs(t, s.Set(ctx, "x", nil), context.Canceled)
	})
}

func TestAdd(t *testing.T) {
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		s, ctx := f.handle(), testCtx(t, long)
		n, err := s.Add(ctx, "c", 5)
		require.NoError(t, err)
		require.Equal(t, int64(5), n)
		n, err = s.Add(ctx, "c", -7)
		require.NoError(t, err)
		require.Equal(t, int64(-2), n)
		v, err := s.Get(ctx, "c")
		require.NoError(t, err)
		require.Equal(t, []byte("-2"), v)

		require.NoError(t, s.Set(ctx, "text", []byte("abc")))
		_, err = s.Add(ctx, "text", 1)
		require.ErrorIs(t, err, ErrNotCounter)

		require.NoError(t, s.Set(ctx, "max", []byte(fmt.Sprint(int64(math.MaxInt64)))))
		_, err = s.Add(ctx, "max", 1)
		require.ErrorIs(t, err, ErrOverflow)
		_, err = s.Add(ctx, "c", math.MinInt64)
		require.ErrorIs(t, err, ErrOverflow, "-2 + MinInt64 underflows")
		n, err = s.Add(ctx, "c", 2)
		require.NoError(t, err)
		require.Equal(t, int64(0), n, "a failed Add changes nothing")
	})
}

func TestAddAtomicUnderConcurrency(t *testing.T) {
	const clients, adds = 8, 50
	eachBackend(t, Limits{}, func(t *testing.T, f fixture) {
		ctx := testCtx(t, long)
		results := make(chan int64, clients*adds)
		var wg sync.WaitGroup
		for range clients {
			s := f.handle()
			wg.Go(func() {
				for range adds {
					n, err := s.Add(ctx, "counter", 1)
					if err != nil {
						t.Error(err)
						return
					}
					results <- n
				}
			})
		}
		wg.Wait()
		close(results)
		seen := make(map[int64]bool)
		for n := range results {
			require.False(t, seen[n], "Add returned %d twice", n)
			seen[n] = true
		}
		require.Len(t, seen, clients*adds)
		n, err := f.handle().Add(ctx, "counter", 0)
		require.NoError(t, err)
		require.Equal(t, int64(clients*adds), n)
	})
}
