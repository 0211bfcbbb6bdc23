package collective

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/inproc"
)

// TestEagerRaceAbortClose runs Abort, and Close, on the root between its
// eager Broadcast's return decision and the moment the call is deferred
// (testHookDeferEnd): their own settle finds nothing deferred yet. The
// call must then end inline rather than stay open: before, an Abort waited
// its whole 10 s drain for it and a Close left it open, holding its copy.
// The same on a receiver (rank 1) and a forwarder (rank 2, which waits for
// its send to rank 3 before it returns).
func TestEagerRaceAbortClose(t *testing.T) {
	for _, who := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("rank%d", who), func(t *testing.T) { raceAbortClose(t, who) })
	}
}

func raceAbortClose(t *testing.T, who int) {
	for _, tc := range []struct {
		name string
		race func(t *testing.T, c *Comm) func() // runs in the hook; returns the wait for its end
	}{
		{"abort", func(t *testing.T, c *Comm) func() {
			done := make(chan error, 1)
			go func() { done <- c.Abort() }()
			for c.Aborted() == nil {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // Abort goes on to look for a deferred call
			return func() {
				select {
				case err := <-done:
					require.NoError(t, err)
				case <-time.After(5 * time.Second): // a hang: the drain is 10 s
					t.Fatal("Abort waited for its drain: the racing eager call stayed open")
				}
			}
		}},
		{"close", func(t *testing.T, c *Comm) func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			return func() {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comms := eagerComms(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var armed atomic.Bool
			var after func()
			testHookDeferEnd = func(c *Comm) {
				if c == comms[who] && armed.CompareAndSwap(true, false) {
					after = tc.race(t, c)
				}
			}
			defer func() { testHookDeferEnd = nil }()
			var wg sync.WaitGroup
			for r, c := range comms {
				wg.Go(func() {
					x := make([]float32, 4<<10) // copied: the call holds a lease
					for i := range 6 {
						if r == who && i == 5 {
							armed.Store(true)
						}
						if Broadcast(ctx, c, x, x, 0) != nil {
							return // the abort ends the peers' calls
						}
					}
				})
			}
			wg.Wait()
			require.NotNil(t, after, "rank %d's last call was not eager", who)
			after()
			c := comms[who]
			c.mu.Lock()
			defer c.mu.Unlock()
			require.True(t, c.eager.deferred == nil, "the racing eager call was deferred")
			require.Zero(t, c.eager.running, "a call is still open")
		})
	}
}

// TestEagerAsyncBeforeDeferral: an Async call issued from another
// goroutine between an eager call's return decision and its deferral
// (testHookDeferEnd) finds nothing deferred to settle, and would send
// before the eager call is settled. The eager call then ends inline (it
// does not return early), so what doc.go says holds: a call after an eager
// one sends nothing before that one is settled.
func TestEagerAsyncBeforeDeferral(t *testing.T) {
	comms := eagerComms(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var armed atomic.Bool
	var handle *Handle
	send, recv := []float32{1}, make([]float32, 1)
	testHookDeferEnd = func(c *Comm) {
		if c != comms[0] || !armed.CompareAndSwap(true, false) {
			return
		}
		c.mu.Lock()
		issued := c.eager.issued
		c.mu.Unlock()
		handle = AllReduceAsync(ctx, c, send, recv, Sum)
		for {
			c.mu.Lock()
			taken := c.eager.issued > issued
			c.mu.Unlock()
			if taken {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	defer func() { testHookDeferEnd = nil }()
	var returns uint64
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for r, c := range comms {
		wg.Go(func() {
			x := make([]float32, 2)
			for i := range 6 {
				if r == 0 {
					x[0] = float32(i)
					if i == 5 {
						returns = c.eager.returns.Load()
						armed.Store(true)
					}
				}
				if err := Broadcast(ctx, c, x, x, 0); err != nil {
					errs[r] = err
					return
				}
				if x[0] != float32(i) {
					errs[r] = fmt.Errorf("broadcast %d: got %v", i, x[0])
					return
				}
			}
			if r == 0 {
				errs[r] = handle.Wait(ctx)
			} else {
				rs, rr := []float32{1}, make([]float32, 1)
				errs[r] = AllReduce(ctx, c, rs, rr, Sum)
				if errs[r] == nil && rr[0] != 4 {
					errs[r] = fmt.Errorf("allreduce: got %v, want 4", rr[0])
				}
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	require.Equal(t, float32(4), recv[0])
	c := comms[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, returns, c.eager.returns.Load(), "the call raced by an Async one returned early")
	require.True(t, returns > 0, "the calls before were eager")
	require.True(t, c.eager.deferred == nil)
}

// eagerComms returns the communicators of a 4-rank inproc world, closed
// when the test ends, with a 5 s timeout.
func eagerComms(t *testing.T) []*Comm {
	w, err := inproc.NewWorld(4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	comms := make([]*Comm, 4)
	for r, ep := range w.Endpoints() {
		comms[r], err = New(ep, 1, Config{Timeout: 5 * time.Second})
		require.NoError(t, err)
	}
	return comms
}
