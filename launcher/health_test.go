package launcher

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
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
