package launcher

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/shm"
)

func TestGuardedEndpointDeclareDead(t *testing.T) {
	w, err := inproc.NewWorld(3)
	require.NoError(t, err)
	defer w.Close()
	g := newGuardedEndpoint(w.Endpoint(0))
	op := transport.OpKey{Comm: 1, Op: 7}
	buf := make([]byte, 4)
	// A receive from a live rank that waits for the dead one.
	pending := g.Recv(1, transport.Tag{OpKey: op}, buf)
	select {
	case <-pending.Done():
		t.Fatal("receive completed with nothing sent")
	default:
	}
	cause := errors.New("no heartbeat")
	require.True(t, g.declareDead(2, cause))
	require.False(t, g.declareDead(2, cause), "declared twice")
	require.False(t, g.declareDead(0, cause), "declared itself")
	require.True(t, g.isDead(2))
	require.False(t, g.isDead(1))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pending.Wait(ctx)
	var pe *transport.PeerError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, 2, pe.Rank)
	require.ErrorIs(t, err, cause)

	// Later requests with the dead rank fail at once; others go through.
	later := g.Send(2, transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 8}}, buf)
	<-later.Done()
	_, err = later.Wait(ctx)
	require.True(t, errors.As(err, &pe))
	require.Equal(t, 2, pe.Rank)
	self := g.Send(0, transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 9}}, buf)
	selfRecv := g.Recv(0, transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 9}}, make([]byte, 4))
	_, err = self.Wait(ctx)
	require.NoError(t, err)
	_, err = selfRecv.Wait(ctx)
	require.NoError(t, err)
}

func TestGuardedEndpointLost(t *testing.T) {
	w, err := inproc.NewWorld(2)
	require.NoError(t, err)
	defer w.Close()
	g := newGuardedEndpoint(w.Endpoint(0))
	op := transport.OpKey{Comm: 3, Op: 1}
	pending := g.Recv(1, transport.Tag{OpKey: op}, make([]byte, 1))
	lost := errors.New("lost the store")
	g.declareLost(lost)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pending.Wait(ctx)
	require.ErrorIs(t, err, lost)
	_, err = g.Send(0, transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 2}}, nil).Wait(ctx)
	require.ErrorIs(t, err, lost)
	require.True(t, g.isDead(1))
}

func TestOpRingBounded(t *testing.T) {
	r := opRing{seen: map[transport.OpKey]struct{}{}}
	for i := range 3 * recentOpsMax {
		r.add(transport.OpKey{Op: uint64(i)})
		r.add(transport.OpKey{Op: uint64(i)})
	}
	ops := r.list()
	require.Len(t, ops, recentOpsMax)
	require.Len(t, r.seen, recentOpsMax)
	require.Equal(t, uint64(2*recentOpsMax), ops[0].Op)
	require.Equal(t, uint64(3*recentOpsMax-1), ops[len(ops)-1].Op)
}

// storeNotes is a failureNotes whose store holds note for every rank, and
// that counts its reads.
type storeNotes struct {
	note  string
	reads int
}

func (n *storeNotes) publish(error) {}
func (n *storeNotes) explain(int) (string, bool) {
	n.reads++
	return n.note, n.note != ""
}

// A peer's error is explained by the reason of the latest abort heard from
// it, without reading the store (which may be behind the cut that hides
// the peer); without one, by its note in the store.
func TestExplainedByAbortHeard(t *testing.T) {
	w, err := inproc.NewWorld(3)
	require.NoError(t, err)
	defer w.Close()
	g := newGuardedEndpoint(w.Endpoint(0))
	notes := &storeNotes{note: "from the store"}
	g.notes = notes
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	w.Endpoint(1).Abort(transport.OpKey{Comm: 1, Op: 1}, []int{0}, errors.New("rank 2 stopped answering"))
	require.Eventually(t, func() bool { _, ok := g.toldBy(1); return ok }, 20*time.Second, time.Millisecond)
	for _, c := range []struct {
		peer  int
		want  string
		reads int
	}{
		{1, "(rank 1 had failed: rank 2 stopped answering)", 0},
		{2, "(rank 2 had failed: from the store)", 1},
	} {
		pending := g.Recv(c.peer, transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: uint64(2 + c.peer)}}, nil)
		require.True(t, g.declareDead(c.peer, errors.New("gone")))
		_, err := pending.Wait(ctx)
		require.ErrorContains(t, err, c.want)
		require.Equal(t, c.reads, notes.reads, "store reads after rank %d's error", c.peer)
	}
}

// slowStore is a store whose Set records the value, then blocks until
// released (a store behind a cut) unless it is fast.
type slowStore struct {
	store.Store
	fast    bool
	release chan struct{}
	got     chan string
}

func (s *slowStore) Set(_ context.Context, key string, value []byte) error {
	if !s.fast {
		<-s.release
	}
	s.got <- key + "=" + string(value)
	return nil
}

// An abort's note is written before the abort goes on when the store
// answers, but a store that does not answer delays it only publishWait.
func TestPublishDoesNotWaitForASlowStore(t *testing.T) {
	for _, fast := range []bool{true, false} {
		s := &slowStore{fast: fast, release: make(chan struct{}), got: make(chan string, 1)}
		lc := &lifecycle{job: Job{Rank: 3}, log: slog.New(slog.DiscardHandler), kv: s}
		lc.publish(errors.New("rank 1 stopped answering"))
		if fast {
			require.Equal(t, "fail/3=rank 1 stopped answering", <-s.got)
			continue
		}
		select {
		case <-s.got:
			t.Fatal("the slow store's write completed before it was released")
		default:
		}
		close(s.release) // the write goes on after publish returned
		require.Equal(t, "fail/3=rank 1 stopped answering", <-s.got)
	}
}

// TestOpRingAddAllocatesNothing: noting an operation, again or anew once
// the set is full, allocates nothing in steady state (every request of a
// job under the launcher passes through it).
func TestOpRingAddAllocatesNothing(t *testing.T) {
	r := opRing{seen: map[transport.OpKey]struct{}{}}
	for i := range 2 * recentOpsMax {
		r.add(transport.OpKey{Op: uint64(i)})
	}
	i := uint64(2 * recentOpsMax)
	allocs := testing.AllocsPerRun(1000, func() {
		r.add(transport.OpKey{Op: i})
		r.add(transport.OpKey{Op: i})
		i++
	})
	require.Zero(t, allocs)
	require.Len(t, r.list(), recentOpsMax)
}

// TestGuardedRequestAllocs: a small Send and Recv through the guard over
// shared memory, waited for and released, allocate nothing in steady
// state: the transport's requests go back to it through the wrapper
// (transport.Release), the wrappers go back to the guard, and a Wait that
// succeeds allocates nothing.
func TestGuardedRequestAllocs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, 2, shm.Config{})
	require.NoError(t, err)
	g0, g1 := newGuardedEndpoint(eps[0]), newGuardedEndpoint(eps[1])
	g0.notes, g1.notes = &storeNotes{}, &storeNotes{}
	t.Cleanup(func() { _ = g0.Close(); _ = g1.Close() })
	out, in := make([]byte, 8), make([]byte, 8)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	allocs := testing.AllocsPerRun(1000, func() {
		s, r := g0.Send(1, tag, out), g1.Recv(0, tag, in)
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		transport.Release(s)
		transport.Release(r)
	})
	require.Zero(t, allocs)
}
