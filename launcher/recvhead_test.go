//go:build linux

package launcher

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestGuardedRecvHead: the guard forwards RecvHead (transport.HeadReceiver)
// to shared memory, so that a collective under the launcher takes a header
// and the block sent with it in one request: the head and the body
// arrive, and Tail is seen through the wrapper. It posts nothing for a
// body the ring carries, nor over a transport without RecvHead (inproc).
// A head that SendWithHead wrote into the ring (complete at once) comes
// back as the transport's own request, unwrapped; a pending one (inproc)
// is wrapped, as every other request.
func TestGuardedRecvHead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, 2, shm.Config{})
	require.NoError(t, err)
	g0, g1 := newGuardedEndpoint(eps[0]), newGuardedEndpoint(eps[1])
	g0.notes, g1.notes = &storeNotes{}, &storeNotes{}
	t.Cleanup(func() { _ = g0.Close(); _ = g1.Close() })
	k := transport.OpKey{Comm: 5, Op: 1}
	ht, bt := transport.Tag{OpKey: k}, transport.Tag{OpKey: k, Seq: 1}
	head, body := []byte("header"), bytes.Repeat([]byte{9}, 64<<10)
	hbuf, bbuf := make([]byte, 64), make([]byte, len(body))
	r := g1.RecvHead(0, ht, hbuf, bt, bbuf)
	require.NotNil(t, r)
	hs, bs := g0.SendWithHead(1, ht, head, bt, body)
	n, err := r.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, "header", string(hbuf[:n]))
	tn, ok := transport.TailOf(r)
	require.True(t, ok, "the body was not taken with the head")
	require.Equal(t, len(body), tn)
	require.Equal(t, body, bbuf)
	for _, s := range []transport.Request{hs, bs} {
		_, err := s.Wait(ctx)
		require.NoError(t, err)
	}
	_, wrapped := hs.(*explainedRequest)
	require.False(t, wrapped, "a head sent in the ring came back wrapped")
	_, wrapped = bs.(*explainedRequest)
	require.True(t, wrapped, "the body's send was not wrapped")
	require.Nil(t, g1.RecvHead(0, ht, hbuf, bt, make([]byte, 100)), "a body the ring carries")

	w, err := inproc.NewWorld(2)
	require.NoError(t, err)
	defer w.Close()
	gi := newGuardedEndpoint(w.Endpoint(1))
	require.Nil(t, gi.RecvHead(0, ht, hbuf, bt, bbuf), "over inproc")
	// inproc's send completes once received: the pending head is wrapped.
	gs := newGuardedEndpoint(w.Endpoint(0))
	gs.notes = &storeNotes{}
	hs, bs = gs.SendWithHead(1, ht, head, bt, body)
	_, wrapped = hs.(*explainedRequest)
	require.True(t, wrapped, "a pending head over inproc was not wrapped")
	hs.Cancel()
	bs.Cancel()
}
