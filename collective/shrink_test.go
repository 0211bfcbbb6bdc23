package collective_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// memKV is a collective.ShrinkStore in memory (launcher/store's MemStore
// is one too; this keeps the package's tests free of the launcher).
type memKV struct {
	mu      sync.Mutex
	m       map[string][]byte
	changed chan struct{} // closed and replaced at every write
}

func newMemKV() *memKV { return &memKV{m: map[string][]byte{}, changed: make(chan struct{})} }

func (s *memKV) writeLocked(k string, v []byte) {
	s.m[k] = append([]byte{}, v...)
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *memKV) Set(_ context.Context, k string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeLocked(k, v)
	return nil
}

func (s *memKV) TryGet(_ context.Context, k string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok, nil
}

func (s *memKV) CompareAndSet(_ context.Context, k string, expected, desired []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if expected == nil && !ok || expected != nil && ok && string(v) == string(expected) {
		s.writeLocked(k, desired)
		return desired, true, nil
	}
	return v, false, nil
}

func (s *memKV) Wait(ctx context.Context, keys ...string) error {
	for {
		s.mu.Lock()
		missing := false
		for _, k := range keys {
			if _, ok := s.m[k]; !ok {
				missing = true
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if !missing {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// shrinkWorld returns n communicators over an in-process world sharing
// one in-memory store, and the endpoints.
func shrinkWorld(t *testing.T, n int, dead func(r int) func() []int) ([]*collective.Comm, []transport.Endpoint) {
	t.Helper()
	w, err := inproc.NewWorld(n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	st := newMemKV()
	comms := make([]*collective.Comm, n)
	for r, ep := range w.Endpoints() {
		cfg := collective.Config{Store: st}
		if dead != nil {
			cfg.Dead = dead(r)
		}
		comms[r], err = collective.New(ep, 1, cfg)
		require.NoError(t, err)
	}
	return comms, w.Endpoints()
}

// shrinkOn runs Shrink on the given ranks at once with each one's exclude
// list and returns the new communicators and errors by rank.
func shrinkOn(t *testing.T, comms []*collective.Comm, excl map[int][]int) (map[int]*collective.Comm, map[int]error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	subs, errs := map[int]*collective.Comm{}, map[int]error{}
	var wg sync.WaitGroup
	for r, ex := range excl {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub, err := comms[r].Shrink(ctx, ex)
			mu.Lock()
			subs[r], errs[r] = sub, err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return subs, errs
}

// requireSum checks an AllReduce on the survivors' communicators: each
// contributes its old rank + 1, and every one gets want.
func requireSum(t *testing.T, subs map[int]*collective.Comm, want float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	got := map[int][]float64{}
	var mu sync.Mutex
	for old, c := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := []float64{float64(old + 1), 1}
			err := collective.AllReduce(ctx, c, x, x, collective.Sum)
			mu.Lock()
			defer mu.Unlock()
			require.NoError(t, err, "old rank %d", old)
			got[old] = x
		}()
	}
	wg.Wait()
	for old, x := range got {
		require.Equal(t, []float64{want, float64(len(subs))}, x, "old rank %d", old)
	}
}

// TestShrinkLeavesOutTheFailedRank: rank 2 of 4 is gone (its endpoint
// closed); only rank 0 names it. The three survivors get the same
// 3-rank communicator, renumbered 0, 1, 2 in order, and it works.
func TestShrinkLeavesOutTheFailedRank(t *testing.T) {
	comms, eps := shrinkWorld(t, 4, nil)
	require.NoError(t, eps[2].Close())
	subs, errs := shrinkOn(t, comms, map[int][]int{0: {2}, 1: nil, 3: nil})
	ids := map[uint64]bool{}
	for old, want := range map[int]int{0: 0, 1: 1, 3: 2} {
		require.NoError(t, errs[old], "old rank %d", old)
		require.Equal(t, 3, subs[old].Size())
		require.Equal(t, want, subs[old].Rank(), "old rank %d", old)
		ids[subs[old].ID()] = true
	}
	require.Len(t, ids, 1, "every survivor has the same communicator id")
	require.NotEqual(t, comms[0].ID(), subs[0].ID())
	requireSum(t, subs, 1+2+4)

	// A second Shrink of the new communicator: old rank 3 (now 2) leaves.
	subs2, errs2 := shrinkOn(t, []*collective.Comm{subs[0], subs[1]}, map[int][]int{0: {2}, 1: {2}})
	require.NoError(t, errs2[0])
	require.NoError(t, errs2[1])
	requireSum(t, subs2, 1+2)
}

// TestShrinkAgreesOnTheUnion: rank 0 names rank 2, rank 1 names rank 3,
// and the health checks of rank 4 report rank 5 dead: the decision is the
// union, every survivor gets the same communicator, and rank 3, which
// called Shrink, learns that it was left out.
func TestShrinkAgreesOnTheUnion(t *testing.T) {
	dead := func(r int) func() []int {
		if r == 4 {
			return func() []int { return []int{5} }
		}
		return nil
	}
	comms, _ := shrinkWorld(t, 6, dead)
	subs, errs := shrinkOn(t, comms, map[int][]int{0: {2}, 1: {3}, 3: nil, 4: nil})
	require.ErrorIs(t, errs[3], collective.ErrExcluded)
	require.Contains(t, errs[3].Error(), "ranks 2, 3, 5")
	delete(subs, 3)
	for old, want := range map[int]int{0: 0, 1: 1, 4: 2} {
		require.NoError(t, errs[old], "old rank %d", old)
		require.Equal(t, want, subs[old].Rank())
		require.Equal(t, 3, subs[old].Size())
	}
	requireSum(t, subs, 1+2+5)
}

// TestShrinkAfterAbort: rank 3 hangs (never calls the AllReduce the others
// wait in); rank 0 aborts, every survivor's call ends, and the survivors
// shrink the aborted communicator and go on with correct results.
func TestShrinkAfterAbort(t *testing.T) {
	comms, _ := shrinkWorld(t, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var handles []*collective.Handle
	for r := range 3 {
		x := make([]float32, 4096)
		handles = append(handles, collective.AllReduceAsync(ctx, comms[r], x, x, collective.Sum))
	}
	require.NoError(t, comms[0].Abort())
	for _, h := range handles {
		require.ErrorIs(t, h.Wait(ctx), collective.ErrAborted)
	}
	subs, errs := shrinkOn(t, comms, map[int][]int{0: {3}, 1: {3}, 2: {3}})
	for r := range 3 {
		require.NoError(t, errs[r])
	}
	requireSum(t, subs, 1+2+3)
}

// TestShrinkBadArguments: each is an error at once, on the caller alone.
func TestShrinkBadArguments(t *testing.T) {
	comms, _ := shrinkWorld(t, 3, nil)
	ctx := context.Background()
	for _, ex := range [][]int{{1}, {-1}, {3}} {
		_, err := comms[1].Shrink(ctx, ex)
		require.Error(t, err, "exclude %v", ex)
	}
	plain := newComms(t, 2, collective.Config{})
	_, err := plain[0].Shrink(ctx, nil)
	require.ErrorContains(t, err, "Config.Store")
}

// TestShrinkWaitsForASilentRank: a rank that neither calls Shrink nor is
// named is waited for, and ctx's end says which rank.
func TestShrinkWaitsForASilentRank(t *testing.T) {
	comms, _ := shrinkWorld(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := comms[0].Shrink(ctx, []int{1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "waiting for rank 2")
}

func ExampleComm_Shrink() {
	w, _ := inproc.NewWorld(3)
	defer w.Close()
	st := newMemKV() // in a job: the job's store (gocoll.Init sets it)
	ctx := context.Background()
	var wg sync.WaitGroup
	out := make([]string, 3)
	for r, ep := range w.Endpoints() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := collective.New(ep, 1, collective.Config{Store: st})
			if r == 1 {
				return // rank 1 has failed; the survivors name it
			}
			sub, err := c.Shrink(ctx, []int{1})
			if err != nil {
				out[r] = err.Error()
				return
			}
			x := []int32{int32(r)}
			err = collective.AllReduce(ctx, sub, x, x, collective.Sum)
			out[r] = fmt.Sprintf("rank %d is rank %d of %d, sum %d, %v", r, sub.Rank(), sub.Size(), x[0], errors.Unwrap(err))
		}()
	}
	wg.Wait()
	fmt.Println(out[0])
	fmt.Println(out[2])
	// Output:
	// rank 0 is rank 0 of 2, sum 2, <nil>
	// rank 2 is rank 1 of 2, sum 2, <nil>
}
