package inproc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSendRecvEitherOrder(t *testing.T) {
	w, err := NewWorld(2)
	require.NoError(t, err)
	defer w.Close()
	a, b := w.Endpoint(0), w.Endpoint(1)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 2}}

	s := a.Send(1, tag, []byte("hello"))
	buf := make([]byte, 8)
	n, err := b.Recv(0, tag, buf).Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf[:n]))
	_, err = s.Wait(testCtx(t))
	require.NoError(t, err)

	r := b.Recv(0, tag, buf)
	_, err = a.Send(1, tag, []byte("x")).Wait(testCtx(t))
	require.NoError(t, err)
	n, err = r.Wait(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, "x", string(buf[:n]))
}

func TestAbortReachesPeers(t *testing.T) {
	w, err := NewWorld(3)
	require.NoError(t, err)
	defer w.Close()
	op := transport.OpKey{Comm: 7, Op: 1}
	tag := transport.Tag{OpKey: op}
	pending := w.Endpoint(2).Recv(0, tag, make([]byte, 4))
	w.Endpoint(0).Abort(op, []int{1, 2}, errors.New("count mismatch"))

	_, err = pending.Wait(testCtx(t))
	var ra *transport.RemoteAbortError
	require.ErrorAs(t, err, &ra)
	require.Equal(t, 0, ra.Rank)
	require.Contains(t, ra.Reason, "count mismatch")

	_, err = w.Endpoint(1).Recv(0, tag, nil).Wait(testCtx(t))
	require.ErrorAs(t, err, &ra)
	// Another operation is unaffected.
	other := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: 2}}
	s := w.Endpoint(0).Send(1, other, []byte{1})
	_, err = w.Endpoint(1).Recv(0, other, make([]byte, 1)).Wait(testCtx(t))
	require.NoError(t, err)
	_, err = s.Wait(testCtx(t))
	require.NoError(t, err)
}

func TestCancelAndClose(t *testing.T) {
	w, err := NewWorld(2)
	require.NoError(t, err)
	tag := transport.Tag{}
	buf := []byte{9}
	r := w.Endpoint(1).Recv(0, tag, buf)
	r.Cancel()
	_, err = r.Wait(testCtx(t))
	require.ErrorIs(t, err, transport.ErrCancelled)
	s := w.Endpoint(0).Send(1, tag, []byte{1})
	require.NoError(t, w.Endpoint(1).Close())
	_, err = s.Wait(testCtx(t))
	var pe *transport.PeerError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 1, pe.Rank)
	require.Equal(t, []byte{9}, buf)
	_, err = w.Endpoint(1).Recv(0, tag, buf).Wait(testCtx(t))
	require.ErrorIs(t, err, transport.ErrClosed)
	require.NoError(t, w.Close())
}

// TestRecvFromClosedPeerFails: a receive from a rank that closes fails
// with a *transport.PeerError naming it, whether it was posted before the
// close (it was waiting) or after, never waiting for ever.
func TestRecvFromClosedPeerFails(t *testing.T) {
	w, err := NewWorld(3)
	require.NoError(t, err)
	eps := w.Endpoints()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	before := eps[0].Recv(1, tag, make([]byte, 8))
	other := eps[0].Recv(2, tag, make([]byte, 8))
	require.NoError(t, eps[1].Close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, r := range []transport.Request{before, eps[0].Recv(1, tag, make([]byte, 8))} {
		_, err := r.Wait(ctx)
		var pe *transport.PeerError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 1, pe.Rank)
		require.ErrorIs(t, err, transport.ErrClosed)
	}
	select {
	case <-other.Done():
		t.Fatal("a receive from a rank still open ended")
	default:
	}
	_, err = eps[2].Send(0, tag, []byte("12345678")).Wait(ctx)
	require.NoError(t, err)
	n, err := other.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, n)
}
